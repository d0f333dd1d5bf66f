package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolsTableHeader opens the table of the built-in tools in the
// documentation (README.md, or a page of docs/ should it move there).
const toolsTableHeader = "| Tool | Category | Confirms |"

// docsToolsTable returns the rows of the documented tools table: each
// tool's category and its "Confirms" cell, and the file it was found in.
func docsToolsTable(t *testing.T) (map[string][2]string, string) {
	t.Helper()
	pages, _ := filepath.Glob("../../docs/*.md")
	for _, p := range append([]string{"../../README.md"}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, table, found := strings.Cut(string(b), "\n"+toolsTableHeader)
		if !found {
			continue
		}
		rows := map[string][2]string{}
		for _, line := range strings.Split(table, "\n")[2:] { // after the header's rest and |---|
			if !strings.HasPrefix(line, "|") {
				break
			}
			// The first three cells hold no '|' (a description may, as \|).
			cells := strings.SplitN(strings.TrimPrefix(line, "|"), "|", 4)
			if len(cells) < 4 {
				t.Fatalf("%s: row %q has fewer than 3 cells", p, line)
			}
			for _, name := range strings.Split(cells[0], ", ") {
				name = strings.Trim(strings.TrimSpace(name), "`")
				rows[name] = [2]string{strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])}
			}
		}
		return rows, p
	}
	t.Fatalf("no page has the tools table (%q)", toolsTableHeader)
	return nil, ""
}

// The documented tools table says what 'jarvis tools list' says: every
// built-in tool, by its full name, with its category and whether it asks
// (always, per call, never).
func TestDocumentedToolsTableMatchesToolsList(t *testing.T) {
	out, errOut, code := runCLI(t, "", "tools", "list")
	if code != ExitOK {
		t.Fatalf("tools list: exit %d: %s", code, errOut)
	}
	listed := map[string][2]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		confirm := f[2]
		if confirm == "per" && f[3] == "call" {
			confirm = "per call"
		}
		listed[f[0]] = [2]string{f[1], confirm}
	}
	documented, page := docsToolsTable(t)
	// How the table words the CONFIRM column of tools list.
	confirms := func(cell string) string {
		switch {
		case cell == "":
			return "no"
		case strings.HasPrefix(cell, "yes"):
			return "yes"
		case cell == "outside the working area":
			return "per call"
		}
		return "(" + cell + ")"
	}
	for name, l := range listed {
		d, ok := documented[name]
		if !ok {
			t.Errorf("%s: the tools table lacks %s (tools list: %s, confirm %s)", page, name, l[0], l[1])
			continue
		}
		if d[0] != l[0] || confirms(d[1]) != l[1] {
			t.Errorf("%s: %s is documented as %s, confirms %q; tools list says %s, confirm %s", page, name, d[0], d[1], l[0], l[1])
		}
	}
	for name := range documented {
		if _, ok := listed[name]; !ok && name != "SERVER__TOOL" && name != "your own" {
			t.Errorf("%s: the tools table names %s, which tools list does not have", page, name)
		}
	}
}
