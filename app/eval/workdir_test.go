package eval

import (
	"os"
	"path/filepath"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
)

// A case's scratch directory is its tools' working directory: a relative
// path in a call reads, indexes and runs there, never in the directory
// the person started jarvis in.
func TestACaseWorksInItsScratchDirectory(t *testing.T) {
	own := t.TempDir()
	if err := os.WriteFile(filepath.Join(own, "notes.txt"), []byte("the person's own"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(own)
	root := t.TempDir()
	scratch := filepath.Join(root, "here")
	srv := fakeServer(t)
	srv.On(et.UserSays("work here")).Reply(et.ToolCall("file_read", `{"path": "notes.txt"}`))
	srv.On(et.ToolResultContains("file_read", "the scratch one")).Reply(et.ToolCall("shell_exec", `{"command": "cat notes.txt; echo written > out.txt"}`))
	srv.On(et.ToolResultContains("shell_exec", "the scratch one")).Reply(et.ToolCall("memory_index", `{"path": "notes.txt"}`))
	srv.On(et.ToolResult("memory_index")).Reply(et.ToolCall("memory_search", `{"query": "scratch"}`))
	srv.On(et.ToolResultContains("memory_search", "the scratch one")).Reply(et.Text("All in the scratch directory."))
	srv.Default(et.Text("Somewhere else."))
	suite := parse(t, `{"name": "wd", "cases": [{"id": "here", "prompt": "work here",
		"tools": ["file_read", "shell_exec", "memory_index", "memory_search"], "files": {"notes.txt": "the scratch one"},
		"approve": ["shell_exec"], "expect": {"answer_contains": "all in the scratch directory"}}]}`)
	r := runSuite(t, srv, suite, root, runOpts{}).Results[0]
	if c := caseByID(t, r, "here"); !c.Passed {
		for _, call := range c.Runs[0].Calls {
			t.Logf("%s: %s", call, call.Status)
		}
		t.Fatalf("case: %s, answer %q", c.Reason, c.Answer)
	}
	if b, err := os.ReadFile(filepath.Join(scratch, "out.txt")); err != nil || string(b) != "written\n" {
		t.Fatalf("the scratch directory's out.txt: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(own, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("the case wrote in the person's directory: %v", err)
	}
}

// A suite that approves a write tool lets it change files in the case's
// scratch directory, and nowhere else: the person's own files stay
// behind the question nobody is there to answer.
func TestAnApprovedWriteToolChangesOnlyTheScratchDirectory(t *testing.T) {
	own := t.TempDir()
	root := t.TempDir()
	scratch := filepath.Join(root, "write")
	srv := fakeServer(t)
	srv.On(et.UserSays("write it")).Reply(et.ToolCall("file_write", `{"path": "out.txt", "content": "in the scratch\n"}`))
	srv.On(et.ToolResult("file_write")).Times(1).Reply(et.ToolCall("file_write", `{"path": "`+filepath.Join(own, "out.txt")+`", "content": "outside\n"}`))
	srv.On(et.ToolResult("file_write")).Reply(et.Text("Done."))
	srv.Default(et.Text("?"))
	suite := parse(t, `{"name": "w", "cases": [{"id": "write", "prompt": "write it", "tools": ["file_write"],
		"approve": ["file_write"], "expect": {"answer_contains": "done"}}]}`)
	r := runSuite(t, srv, suite, root, runOpts{}).Results[0]
	calls := caseByID(t, r, "write").Runs[0].Calls
	if len(calls) != 2 || calls[0].Status != "ok" || calls[1].Status != "denied" {
		t.Fatalf("calls: %+v", calls)
	}
	if b, err := os.ReadFile(filepath.Join(scratch, "out.txt")); err != nil || string(b) != "in the scratch\n" {
		t.Fatalf("the scratch directory's out.txt: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(own, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("the approve list let a write outside the scratch directory: %v", err)
	}
}
