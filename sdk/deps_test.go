package sdk_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A program that imports sdk to ask questions links no terminal UI: not
// Bubble Tea, not glamour, not the command line (sdk/jarvis brings those,
// for Main).
func TestSDKLinksNoTerminalUI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/jarvis-workbench/jarvis/sdk").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"charmbracelet/bubbletea", "charmbracelet/glamour", "alecthomas/chroma", "jarvis/ui/cli", "jarvis/ui/tui"} {
			if strings.Contains(dep, bad) {
				t.Errorf("sdk links %s", dep)
			}
		}
	}
}

// BenchmarkSDKPackageInit is what importing sdk costs a program before
// main runs: the package initialisation GODEBUG=inittrace=1 reports for
// the smallest program using it (target: under 5 ms).
func BenchmarkSDKPackageInit(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "initprobe")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/jarvis-workbench/jarvis/sdk/internal/initprobe").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	var total float64
	for b.Loop() {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			// init PKG @T ms, D ms clock, ...
			f := strings.Fields(sc.Text())
			if len(f) > 5 && f[0] == "init" && f[6] == "clock," {
				ms, _ := strconv.ParseFloat(f[4], 64)
				total += ms
			}
		}
	}
	b.ReportMetric(total/float64(b.N), "init-ms")
}
