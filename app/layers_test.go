package app_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The layers of the README's architecture hold: the application layer
// and everything beneath it link no front end (ui/safe, the escape
// stripper, is a text utility everything may use), and the core never
// reaches up into the application layer.
func TestLayersImportDownward(t *testing.T) {
	const mod = "github.com/jarvis-workbench/jarvis/"
	below := map[string][]string{
		"app":    {"ui/cli", "ui/tui", "ui/evalview", "ui/format", "sdk"},
		"agent":  {"app", "ui/", "sdk"},
		"engine": {"app", "agent", "tools", "store", "ui/", "sdk"},
		"tools":  {"app", "agent", "ui/", "sdk"},
		"store":  {"app", "agent", "engine", "ui/", "sdk"},
		"events": {"app", "agent", "engine", "tools", "store", "ui/", "sdk"},
	}
	for pkg, forbidden := range below {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Skipf("go list: %v", err)
		}
		for _, dep := range strings.Fields(string(out)) {
			rel, ok := strings.CutPrefix(dep, mod)
			if !ok || rel == "ui/safe" {
				continue
			}
			for _, f := range forbidden {
				if rel == strings.TrimSuffix(f, "/") || strings.HasPrefix(rel, strings.TrimSuffix(f, "/")+"/") {
					t.Errorf("%s links %s", pkg, rel)
				}
			}
		}
	}
}
