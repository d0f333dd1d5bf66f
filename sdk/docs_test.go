package sdk_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docBlock returns the first fenced block of page that opens with fence
// and whose text starts with prefix.
func docBlock(t *testing.T, page, fence, prefix string) string {
	t.Helper()
	for rest := page; ; {
		_, after, ok := strings.Cut(rest, "\n"+fence+"\n")
		if !ok {
			t.Fatalf("docs/sdk.md has no %s block starting %q", fence, prefix)
		}
		block, tail, _ := strings.Cut(after, "\n```")
		if strings.HasPrefix(block, prefix) {
			return block + "\n"
		}
		rest = tail
	}
}

// The go.mod and the program docs/sdk.md show a newcomer build a jarvis
// with their tool: the go line is jarvis's own, the replace reaches a
// clone of jarvis, and the program's my_tool is listed beside the
// built-in tools. Offline: jarvis's requirements come from the module
// cache, with jarvis's go.sum.
func TestTheDocumentedGoModBuildsAJarvisWithATool(t *testing.T) {
	b, err := os.ReadFile("../docs/sdk.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	gomod := docBlock(t, page, "```go.mod", "module ")
	program := docBlock(t, page, "```go", "package main")
	own, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := func(mod string) string {
		for _, l := range strings.Split(mod, "\n") {
			if strings.HasPrefix(l, "go ") {
				return l
			}
		}
		return "(no go line)"
	}
	if goLine(gomod) != goLine(string(own)) {
		t.Fatalf("docs/sdk.md's go.mod says %q, jarvis's go.mod %q", goLine(gomod), goLine(string(own)))
	}
	const clone = "replace github.com/jarvis-workbench/jarvis => ../jarvis"
	if !strings.Contains(gomod, "require github.com/jarvis-workbench/jarvis ") || !strings.Contains(gomod, clone) {
		t.Fatalf("docs/sdk.md's go.mod does not require jarvis from a clone beside it:\n%s", gomod)
	}
	// A dependency's replace lines do not apply to the module that
	// requires it: the documented go.mod must name each patched copy
	// jarvis's go.mod replaces, or the program builds other code.
	for _, l := range strings.Split(string(own), "\n") {
		f := strings.Fields(strings.TrimPrefix(l, "replace "))
		if len(f) == 3 && f[1] == "=>" && strings.HasPrefix(f[2], "./third_party/") {
			want := f[0] + " => ../jarvis/" + strings.TrimPrefix(f[2], "./")
			if !strings.Contains(gomod, want) {
				t.Errorf("docs/sdk.md's go.mod lacks %q, which jarvis's go.mod replaces", want)
			}
		}
	}
	if testing.Short() {
		t.Skip("building a whole jarvis: not in -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"go.mod":  strings.ReplaceAll(gomod, "=> ../jarvis", "=> "+root),
		"go.sum":  string(sum),
		"main.go": program,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "jarvis-mine")
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the documented module does not build: %v\n%s", err, out)
	}
	list := exec.Command(bin, "tools", "list")
	list.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("tools list: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "my_tool" && f[1] == "custom" {
			return
		}
	}
	t.Fatalf("the documented program's jarvis lists no my_tool:\n%s", out)
}
