package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// recordingConfirmer answers every request with one decision and keeps the
// requests.
type recordingConfirmer struct {
	mu     sync.Mutex
	answer tools.Decision
	reqs   []tools.ConfirmRequest
}

func (c *recordingConfirmer) Confirm(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	return c.answer, nil
}

func (c *recordingConfirmer) asked() []tools.ConfirmRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tools.ConfirmRequest(nil), c.reqs...)
}

// workArea is a working directory (the process's, while the test runs) and
// a directory outside it, each with a text file.
type workArea struct {
	work, outside       string
	inFile, outsideFile string
}

func newWorkArea(t *testing.T) workArea {
	t.Helper()
	w := workArea{work: t.TempDir(), outside: t.TempDir()}
	w.inFile = filepath.Join(w.work, "notes.txt")
	w.outsideFile = filepath.Join(w.outside, "report.txt")
	write(t, w.inFile, "inside")
	write(t, w.outsideFile, "outside")
	t.Chdir(w.work)
	return w
}

func executorFor(t *testing.T, c tools.Confirmer, settings tools.Settings) *tools.Executor {
	t.Helper()
	tool, err := NewFileRead(tools.Deps{Settings: map[string]tools.Settings{"file_read": settings}})
	if err != nil {
		t.Fatal(err)
	}
	opts := tools.ExecutorOptions{}
	if c != nil {
		opts.Confirmer = c
	}
	e, err := tools.NewExecutor([]tools.Tool{tools.ApplySettings(tool, settings)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func readVia(t *testing.T, e *tools.Executor, p string) tools.Result {
	t.Helper()
	return e.Execute(context.Background(), tools.Call{ID: "c1", Name: "file_read", Arguments: argsJSON(t, tools.Args{"path": p})})
}

func TestReadingOutsideTheWorkingDirectoryAsks(t *testing.T) {
	w := newWorkArea(t)
	c := &recordingConfirmer{answer: tools.AllowOnce}
	e := executorFor(t, c, tools.Settings{})

	if r := readVia(t, e, "notes.txt"); !r.Success || r.Content != "inside" {
		t.Fatalf("inside: %+v", r)
	}
	if len(c.asked()) != 0 {
		t.Fatalf("asked for a file in the working directory: %+v", c.asked())
	}
	if r := readVia(t, e, w.outsideFile); !r.Success || r.Content != "outside" {
		t.Fatalf("approved outside read: %+v", r)
	}
	reqs := c.asked()
	if len(reqs) != 1 {
		t.Fatalf("asked %d times, want once", len(reqs))
	}
	if want := "reads " + w.outsideFile + ", outside the working directory"; reqs[0].Reason != want {
		t.Errorf("reason %q, want %q", reqs[0].Reason, want)
	}
	if reqs[0].Spec.Name != "file_read" || reqs[0].Arguments.String("path") != w.outsideFile {
		t.Errorf("request = %+v", reqs[0])
	}
	if r := readVia(t, e, w.outsideFile); !r.Success || len(c.asked()) != 2 {
		t.Errorf("allow once must ask again: %d requests", len(c.asked()))
	}
}

func TestOutsideReadDeniedOrWithNobodyToAsk(t *testing.T) {
	w := newWorkArea(t)
	r := readVia(t, executorFor(t, tools.DenyAll, tools.Settings{}), w.outsideFile)
	if r.Success || r.Status != tools.StatusDenied || r.Content != "Tool 'file_read' execution denied by user." {
		t.Errorf("denied: %+v", r)
	}
	r = readVia(t, executorFor(t, nil, tools.Settings{}), w.outsideFile)
	want := "Tool 'file_read' requires confirmation (it reads " + w.outsideFile +
		", outside the working directory) but no confirmation callback is available."
	if r.Success || r.Status != tools.StatusDenied || r.Content != want {
		t.Errorf("nobody to ask:\n got %q\nwant %q", r.Content, want)
	}
	// Probing for files outside asks too.
	missing := filepath.Join(w.outside, "nothing-here.txt")
	if r := readVia(t, executorFor(t, nil, tools.Settings{}), missing); r.Status != tools.StatusDenied {
		t.Errorf("a missing file outside was looked up unasked: %+v", r)
	}
	// The tool itself refuses when called without the executor's gate.
	f, _ := NewFileReadIn(nil)
	if r := read(t, f, tools.Args{"path": w.outsideFile}); r.Success || r.Content != "Access denied: "+w.outsideFile+" is outside the working directory, and the call was not approved." {
		t.Errorf("direct call: %q", r.Content)
	}
}

// allowed_dirs is a hard limit, as the tool spec says: inside, reads run
// unasked; outside (the working directory too, when it is not listed)
// nothing reads, not an approval, not --yes, not a grant; and the refusal
// names the setting to change.
func TestAllowedDirsAreAHardLimit(t *testing.T) {
	w := newWorkArea(t)
	third := t.TempDir()
	write(t, filepath.Join(third, "x.txt"), "third")
	settings := tools.Settings{AllowedDirs: []string{w.outside}}
	c := &recordingConfirmer{answer: tools.AllowOnce}
	e := executorFor(t, c, settings)
	if r := readVia(t, e, w.outsideFile); !r.Success || len(c.asked()) != 0 {
		t.Fatalf("allowed directory asked: %+v %d", r, len(c.asked()))
	}
	for _, p := range []string{"notes.txt", filepath.Join(third, "x.txt")} {
		r := readVia(t, e, p)
		if r.Success || r.Status != tools.StatusDenied || !strings.Contains(r.Content, "[tool.file_read] allowed_dirs") {
			t.Errorf("%s outside allowed_dirs: %+v", p, r)
		}
	}
	if len(c.asked()) != 0 {
		t.Errorf("a read outside a hard limit was asked about: %+v", c.asked())
	}
	// --yes (a policy that allows everything) and grants do not lift it.
	for _, o := range []tools.PolicyOptions{{Yes: true}, {Approvals: grantsFor("file_read", third)}} {
		tool, _ := NewFileRead(tools.Deps{Settings: map[string]tools.Settings{"file_read": settings}})
		ex, err := tools.NewExecutor([]tools.Tool{tool}, tools.ExecutorOptions{Policy: tools.NewPolicy(o)})
		if err != nil {
			t.Fatal(err)
		}
		if r := readVia(t, ex, filepath.Join(third, "x.txt")); r.Success {
			t.Errorf("read past allowed_dirs with %+v: %q", o, r.Content)
		}
	}
}

// grantsFor is a session holding a grant of tool in dir.
func grantsFor(tool, dir string) *tools.Approvals {
	a := tools.NewApprovals()
	real, _ := filepath.EvalSymlinks(dir)
	a.Grant(tools.Grant{Tool: tool, Scope: tools.Scope{Kind: tools.ScopeDir, Value: real}})
	return a
}

func TestConfirmSettingAddsAskingButNeverRemovesIt(t *testing.T) {
	w := newWorkArea(t)
	off, on := false, true

	c := &recordingConfirmer{answer: tools.AllowOnce}
	e := executorFor(t, c, tools.Settings{RequiresConfirmation: &off})
	readVia(t, e, "notes.txt")
	readVia(t, e, w.outsideFile)
	if reqs := c.asked(); len(reqs) != 1 || reqs[0].Reason == "" {
		t.Errorf("confirm = false: requests %+v, want one for the outside read", reqs)
	}
	if r := readVia(t, executorFor(t, nil, tools.Settings{RequiresConfirmation: &off}), w.outsideFile); r.Status != tools.StatusDenied {
		t.Errorf("confirm = false turned the rule off: %+v", r)
	}

	c = &recordingConfirmer{answer: tools.AllowOnce}
	e = executorFor(t, c, tools.Settings{RequiresConfirmation: &on})
	readVia(t, e, "notes.txt")
	if reqs := c.asked(); len(reqs) != 1 || reqs[0].Reason != "" {
		t.Errorf("confirm = true must ask for every call: %+v", reqs)
	}
}

func TestSessionApprovalCoversOutsideReads(t *testing.T) {
	w := newWorkArea(t)
	other := filepath.Join(w.outside, "other.txt")
	write(t, other, "more")
	c := &recordingConfirmer{answer: tools.AllowSession}
	e := executorFor(t, c, tools.Settings{})
	for _, p := range []string{w.outsideFile, other, w.outsideFile} {
		if r := readVia(t, e, p); !r.Success {
			t.Fatalf("%s: %+v", p, r)
		}
	}
	if n := len(c.asked()); n != 1 {
		t.Errorf("asked %d times after allowing for the session", n)
	}
}

func TestLinkOutOfTheWorkingDirectoryAsks(t *testing.T) {
	w := newWorkArea(t)
	if err := os.Symlink(w.outsideFile, filepath.Join(w.work, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.outside, filepath.Join(w.work, "dir")); err != nil {
		t.Fatal(err)
	}
	c := &recordingConfirmer{answer: tools.Deny}
	e := executorFor(t, c, tools.Settings{})
	for _, p := range []string{"link.txt", "dir/report.txt"} {
		if r := readVia(t, e, p); r.Success {
			t.Errorf("%s read through a link without approval", p)
		}
	}
	if reqs := c.asked(); len(reqs) != 2 || reqs[0].Reason != "reads link.txt, outside the working directory" {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestRootIsNeverTheWorkingArea(t *testing.T) {
	t.Chdir("/")
	r := NewReach(readSetting, nil)
	if len(r.Dirs()) != 0 {
		t.Fatalf("reach from / = %v", r.Dirs())
	}
	if need, _ := r.ConfirmationFor("/etc/hostname", "reads"); !need {
		t.Error("a process started in / reads everything unasked")
	}
	if need, _ := NewReach(readSetting, []string{"/"}).ConfirmationFor("/etc/hostname", "reads"); need {
		t.Error("allowed_dirs = [\"/\"] still asks")
	}
}

func TestReasonQuotesControlCharacters(t *testing.T) {
	newWorkArea(t)
	_, why := NewReach(readSetting, nil).ConfirmationFor("/tmp/\x1b[31mred", "reads")
	if why != `reads "/tmp/\x1b[31mred", outside the working directory` {
		t.Errorf("reason = %q", why)
	}
}

func TestWithinMatchesOnPathBoundaries(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		in     bool
	}{{"/etc", "/etc", true}, {"/etc", "/etc/passwd", true}, {"/etc", "/etcetera/x", false}, {"/", "/x", true}, {"/a/b", "/a", false}} {
		if Within(c.dir, c.p) != c.in {
			t.Errorf("Within(%q, %q) = %v", c.dir, c.p, !c.in)
		}
	}
}

func TestResolveFollowsTheExistingPart(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	realResolved, _ := filepath.EvalSymlinks(real)
	if got := Resolve(filepath.Join(link, "not", "yet.txt")); got != filepath.Join(realResolved, "not", "yet.txt") {
		t.Errorf("Resolve = %q", got)
	}
}
