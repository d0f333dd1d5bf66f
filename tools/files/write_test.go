package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
)

// memLog is a ChangeLog in memory.
type memLog struct {
	mu      sync.Mutex
	changes []sessions.Change
	undone  map[string]bool
}

func (l *memLog) RecordChangeQueued(session string, c sessions.Change) (sessions.Change, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.ID = fmt.Sprintf("%04d", len(l.changes))
	l.changes = append(l.changes, c)
	return c, nil
}

func (l *memLog) Changes(string) (sessions.Session, []sessions.Change, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]sessions.Change(nil), l.changes...)
	for i := range out {
		if l.undone[out[i].ID] {
			out[i].UndoneAt = time.Now()
		}
	}
	return sessions.Session{}, out, nil
}

func (l *memLog) Load(string) (sessions.Session, []sessions.Message, error) {
	return sessions.Session{}, nil, nil
}

func (l *memLog) UndoQueued(_ string, ids ...string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.undone == nil {
		l.undone = map[string]bool{}
	}
	for _, id := range ids {
		l.undone[id] = true
	}
	return nil
}

// actor runs the read and write tools through one executor, in one
// session, answering every question with answer.
type actor struct {
	t     *testing.T
	exec  *tools.Executor
	asker *recordingConfirmer
	log   *memLog
	ctx   context.Context
}

func newActor(t *testing.T, settings map[string]tools.Settings) *actor {
	t.Helper()
	deps := tools.Deps{Settings: settings}
	log := &memLog{}
	read, err := NewFileRead(deps)
	if err != nil {
		t.Fatal(err)
	}
	asker := &recordingConfirmer{answer: tools.AllowOnce}
	e, err := tools.NewExecutor([]tools.Tool{read, NewFileWrite(deps, log), NewFileEdit(deps, log), NewApplyPatch(deps, log)},
		tools.ExecutorOptions{Confirmer: asker})
	if err != nil {
		t.Fatal(err)
	}
	session := "s-" + t.Name()
	return &actor{t: t, exec: e, asker: asker, log: log, ctx: tools.WithSession(context.Background(), func() string { return session })}
}

func (a *actor) call(name string, args tools.Args) tools.Result {
	a.t.Helper()
	return a.exec.Execute(a.ctx, tools.Call{ID: "call-" + name, Name: name, Arguments: argsJSON(a.t, args)})
}

func (a *actor) mustOK(name string, args tools.Args) tools.Result {
	a.t.Helper()
	r := a.call(name, args)
	if !r.Success {
		a.t.Fatalf("%s %v failed: %s", name, args, r.Content)
	}
	return r
}

func (a *actor) mustFail(name string, args tools.Args, want string) tools.Result {
	a.t.Helper()
	r := a.call(name, args)
	if r.Success || !strings.Contains(r.Content, want) {
		a.t.Fatalf("%s %v: want a failure saying %q, got success=%v %q", name, args, want, r.Success, r.Content)
	}
	return r
}

func content(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFileWriteCreatesAsksWithTheDiffAndRecords(t *testing.T) {
	w := newWorkArea(t)
	a := newActor(t, nil)
	r := a.mustOK("file_write", tools.Args{"path": "sub/new.go", "content": "package x\n"})
	if got := content(t, filepath.Join(w.work, "sub", "new.go")); got != "package x\n" {
		t.Fatalf("content = %q", got)
	}
	if !strings.Contains(r.Content, "Created ./sub/new.go") || !strings.Contains(r.Diff(), "+package x") {
		t.Fatalf("result = %q diff %q", r.Content, r.Diff())
	}
	reqs := a.asker.asked()
	if len(reqs) != 1 || reqs[0].Preview == nil || reqs[0].Preview.Files[0].New != "package x\n" || reqs[0].Preview.Files[0].OldExists {
		t.Fatalf("the question must carry the change: %+v", reqs)
	}
	if s := reqs[0].Scope; s.Kind != tools.ScopeDir || !strings.Contains(s.Words, "changes in ./sub (not its subfolders)") {
		t.Fatalf("scope = %+v", s)
	}
	if len(a.log.changes) != 1 || a.log.changes[0].BeforeExists || a.log.changes[0].After != "package x\n" || a.log.changes[0].CallID != "call-file_write" {
		t.Fatalf("recorded = %+v", a.log.changes)
	}
	// What the model wrote it knows: a second write needs no read.
	a.mustOK("file_write", tools.Args{"path": "sub/new.go", "content": "package y\n"})
}

func TestWritingAnExistingFileNeedsAReadAndNoChangeSince(t *testing.T) {
	w := newWorkArea(t)
	a := newActor(t, nil)
	a.mustFail("file_write", tools.Args{"path": w.inFile, "content": "new"}, "was not read in this session")
	a.mustFail("file_edit", tools.Args{"path": w.inFile, "old_string": "inside", "new_string": "in"}, "was not read in this session")
	if len(a.asker.asked()) != 0 {
		t.Fatal("a call that cannot work must not be asked about")
	}
	a.mustOK("file_read", tools.Args{"path": w.inFile})
	write(t, w.inFile, "edited by the person")
	a.mustFail("file_edit", tools.Args{"path": w.inFile, "old_string": "person", "new_string": "model"}, "changed on disk since you last read it")
	a.mustOK("file_read", tools.Args{"path": w.inFile})
	a.mustOK("file_edit", tools.Args{"path": w.inFile, "old_string": "person", "new_string": "model"})
	if got := content(t, w.inFile); got != "edited by the model" {
		t.Fatalf("content = %q", got)
	}
}

func TestFileChangedBetweenTheQuestionAndTheAnswerIsNotWritten(t *testing.T) {
	w := newWorkArea(t)
	a := newActor(t, nil)
	a.mustOK("file_read", tools.Args{"path": w.inFile})
	// While the dialog is open another call of the model (a parallel
	// one) changes the file, so the model's picture is current again but
	// the change approved was worked out from the old content.
	e, _ := tools.NewExecutor([]tools.Tool{NewFileEdit(tools.Deps{}, a.log)}, tools.ExecutorOptions{Confirmer: tools.ConfirmFunc(
		func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
			write(t, w.inFile, "inside, edited meanwhile")
			reads.saw("s-"+t.Name(), w.inFile, []byte("inside, edited meanwhile"), time.Now())
			return tools.AllowOnce, nil
		})})
	r := e.Execute(a.ctx, tools.Call{ID: "c", Name: "file_edit", Arguments: argsJSON(t, tools.Args{"path": w.inFile, "old_string": "inside", "new_string": "x"})})
	if r.Success || !strings.Contains(r.Content, "no longer what the user approved") {
		t.Fatalf("result = %+v", r)
	}
	if got := content(t, w.inFile); got != "inside, edited meanwhile" {
		t.Fatalf("the person's edit was overwritten: %q", got)
	}
}

func TestFileEditOldStringMissingTwiceOrAll(t *testing.T) {
	w := newWorkArea(t)
	a := newActor(t, nil)
	p := filepath.Join(w.work, "m.go")
	write(t, p, "func a() {\n\treturn 1\n}\nfunc b() {\n\treturn 1\n}\n")
	a.mustOK("file_read", tools.Args{"path": p})
	a.mustFail("file_edit", tools.Args{"path": p, "old_string": "return 2", "new_string": "x"}, "was not found")
	a.mustFail("file_edit", tools.Args{"path": p, "old_string": "    return 1", "new_string": "x"}, "it matches when spaces and line breaks are ignored")
	a.mustFail("file_edit", tools.Args{"path": p, "old_string": "return 1", "new_string": "return 2"}, "occurs 2 times")
	a.mustFail("file_edit", tools.Args{"path": p, "old_string": "return 1", "new_string": "return 1"}, "would change nothing")
	a.mustFail("file_edit", tools.Args{"path": p, "old_string": "", "new_string": "x"}, "old_string is empty")
	a.mustFail("file_edit", tools.Args{"path": "nope.go", "old_string": "a", "new_string": "b"}, "To create a file, use file_write")
	r := a.mustOK("file_edit", tools.Args{"path": p, "old_string": "return 1", "new_string": "return 2", "replace_all": true})
	if !strings.Contains(r.Content, "replaced 2 occurrences") || strings.Count(content(t, p), "return 2") != 2 {
		t.Fatalf("result %q, content %q", r.Content, content(t, p))
	}
}

func TestWriteToolsRefuseBinarySecretsAndPastAllowedDirs(t *testing.T) {
	w := newWorkArea(t)
	bin := filepath.Join(w.work, "blob.bin")
	if err := os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	a := newActor(t, nil)
	a.mustFail("file_write", tools.Args{"path": bin, "content": "text"}, "binary content")
	a.mustFail("file_write", tools.Args{"path": "x.txt", "content": "a\x00b"}, "not UTF-8 text")
	a.mustFail("file_write", tools.Args{"path": ".env", "content": "A=1"}, "Access denied")
	a.mustFail("file_edit", tools.Args{"path": filepath.Join(w.work, ".ssh", "config"), "old_string": "a", "new_string": "b"}, "Access denied")
	key := filepath.Join(w.work, "notes.pem.txt")
	write(t, key, "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
	a.mustFail("file_write", tools.Args{"path": key, "content": "x"}, "Access denied")

	limited := newActor(t, map[string]tools.Settings{"file_write": {AllowedDirs: []string{w.outside}}})
	limited.asker.answer = tools.AllowOnce
	r := limited.call("file_write", tools.Args{"path": filepath.Join(w.work, "in.txt"), "content": "x"})
	if r.Success || r.Status != tools.StatusDenied || !strings.Contains(r.Content, "outside the allowed directories") {
		t.Fatalf("past allowed_dirs: %+v", r)
	}
	if len(limited.asker.asked()) != 0 {
		t.Fatal("a refused call must not be asked about")
	}
	limited.mustOK("file_write", tools.Args{"path": filepath.Join(w.outside, "ok.txt"), "content": "x"})
}

func TestWritingOutsideTheWorkingDirectoryAsksWhyAndDenialWritesNothing(t *testing.T) {
	w := newWorkArea(t)
	a := newActor(t, nil)
	a.asker.answer = tools.Deny
	out := filepath.Join(w.outside, "new.txt")
	r := a.call("file_write", tools.Args{"path": out, "content": "x"})
	if r.Success || r.Status != tools.StatusDenied {
		t.Fatalf("denied: %+v", r)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a denied write wrote")
	}
	if reqs := a.asker.asked(); len(reqs) != 1 || !strings.Contains(reqs[0].Reason, "outside the working directory") {
		t.Fatalf("asked: %+v", reqs)
	}
}

func TestWriteIsAtomicAndKeepsTheMode(t *testing.T) {
	w := newWorkArea(t)
	p := filepath.Join(w.work, "run.sh")
	if err := os.WriteFile(p, []byte("echo a\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	a := newActor(t, nil)
	a.mustOK("file_read", tools.Args{"path": p})
	a.mustOK("file_write", tools.Args{"path": p, "content": "echo b\n"})
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o750 {
		t.Fatalf("mode = %v, %v", info.Mode(), err)
	}
	entries, _ := os.ReadDir(w.work)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".jarvis-") {
			t.Fatalf("a temporary file was left: %s", e.Name())
		}
	}
}

func TestApplyPatchAppliesMovesAndRefuses(t *testing.T) {
	w := newWorkArea(t)
	p := filepath.Join(w.work, "list.txt")
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	write(t, p, b.String())
	a := newActor(t, nil)
	a.mustOK("file_read", tools.Args{"path": p})
	// The header is 3 lines off, and the counts are wrong: it still
	// applies, and the result says both.
	patch := "--- a/list.txt\n+++ b/list.txt\n@@ -7,4 +7,5 @@\n line 9\n-line 10\n+LINE TEN\n line 11\n" +
		"--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+new\n"
	r := a.mustOK("apply_patch", tools.Args{"patch": patch})
	if !strings.Contains(content(t, p), "LINE TEN\nline 11") || content(t, filepath.Join(w.work, "added.txt")) != "new\n" {
		t.Fatalf("content = %q", content(t, p))
	}
	if !strings.Contains(r.Content, "matched 2 lines later") || !strings.Contains(r.Content, "created ./added.txt") ||
		!strings.Contains(r.Content, "recounted") {
		t.Fatalf("result = %q", r.Content)
	}
	if len(a.log.changes) != 2 {
		t.Fatalf("changes = %d", len(a.log.changes))
	}

	bad := "--- a/list.txt\n+++ b/list.txt\n@@ -1,2 +1,2 @@\n line 1\n-line two\n+line 2\n"
	r = a.mustFail("apply_patch", tools.Args{"patch": bad}, "does not apply: hunk 1 of 1")
	if !strings.Contains(r.Content, `expects "line two", the file has "line 2"`) {
		t.Fatalf("the failure must show the first difference: %q", r.Content)
	}
	// One file that does not apply: nothing is written, also not the
	// one that would.
	mixed := "--- /dev/null\n+++ b/other.txt\n@@ -0,0 +1 @@\n+x\n" + bad
	a.mustFail("apply_patch", tools.Args{"patch": mixed}, "does not apply")
	if _, err := os.Stat(filepath.Join(w.work, "other.txt")); err == nil {
		t.Fatal("a patch that failed wrote a file")
	}
	a.mustFail("apply_patch", tools.Args{"patch": "not a patch"}, "holds no file changes")
	write(t, filepath.Join(w.work, "x.bin"), "text")
	a.mustOK("file_read", tools.Args{"path": "x.bin"})
	a.mustFail("apply_patch", tools.Args{"patch": "diff --git a/x.bin b/x.bin\nindex 1111111..2222222 100644\nBinary files a/x.bin and b/x.bin differ\n"}, "binary files are never changed")
	r = a.call("apply_patch", tools.Args{"patch": "--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-A=1\n+A=2\n"})
	if r.Status != tools.StatusDenied {
		t.Fatalf("a patch of a secret: %+v", r)
	}
}

func TestEditedContentBecomesArgumentsThatMakeIt(t *testing.T) {
	w := newWorkArea(t)
	p := filepath.Join(w.work, "a.txt")
	write(t, p, "one\ntwo\nthree\ntwo\n")
	a := newActor(t, nil)
	a.mustOK("file_read", tools.Args{"path": p})
	var rebuilt tools.Args
	e, _ := tools.NewExecutor([]tools.Tool{NewFileEdit(tools.Deps{}, a.log)}, tools.ExecutorOptions{Confirmer: answerer(func(req tools.ConfirmRequest) tools.Answer {
		args, err := req.Preview.Rebuild([]string{"one\ntwo\nTHREE!\ntwo\n"})
		if err != nil {
			t.Fatal(err)
		}
		rebuilt = args
		if c := req.Recheck(args); c.Invalid != "" || c.Preview == nil || c.Preview.Files[0].New != "one\ntwo\nTHREE!\ntwo\n" {
			t.Fatalf("recheck = %+v", c)
		}
		return tools.Answer{Decision: tools.AllowOnce, Arguments: args}
	})})
	r := e.Execute(a.ctx, tools.Call{ID: "c", Name: "file_edit", Arguments: argsJSON(t, tools.Args{"path": p, "old_string": "one", "new_string": "1"})})
	if !r.Success || content(t, p) != "one\ntwo\nTHREE!\ntwo\n" {
		t.Fatalf("result %+v content %q", r, content(t, p))
	}
	if rebuilt["old_string"] != "three\n" || rebuilt["new_string"] != "THREE!\n" {
		t.Fatalf("rebuilt = %v", rebuilt)
	}
	if old, new := minimalEdit("a\nx\nb\nx\nc\n", "a\nx\nb\ny\nc\n"); old != "x\n" && !strings.Contains(old, "b") {
		t.Fatalf("minimal edit must be unique: %q -> %q", old, new)
	} else if strings.Count("a\nx\nb\nx\nc\n", old) != 1 {
		t.Fatalf("old_string %q is not unique", old)
	}
}

type answerer func(tools.ConfirmRequest) tools.Answer

func (f answerer) Confirm(ctx context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	a, err := f.Answer(ctx, req)
	return a.Decision, err
}

func (f answerer) Answer(_ context.Context, req tools.ConfirmRequest) (tools.Answer, error) {
	return f(req), nil
}

func TestUndoRestoresAndRefusesWhenTheFileChangedSince(t *testing.T) {
	w := newWorkArea(t)
	a := newActor(t, nil)
	a.mustOK("file_read", tools.Args{"path": w.inFile})
	a.mustOK("file_edit", tools.Args{"path": w.inFile, "old_string": "inside", "new_string": "changed"})
	a.mustOK("file_write", tools.Args{"path": "fresh.txt", "content": "x"})

	// The last call first: the created file goes away.
	got, err := Undo(a.log, "s", 0)
	if err != nil || len(got) != 1 || got[0].Tool != "file_write" {
		t.Fatalf("undo = %+v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(w.work, "fresh.txt")); err == nil {
		t.Fatal("the created file is still there")
	}
	// The person edits the file: the edit's undo is refused, naming it.
	write(t, w.inFile, "changed by hand")
	if _, err := Undo(a.log, "s", 0); err == nil || !strings.Contains(err.Error(), "notes.txt changed since") {
		t.Fatalf("undo over the person's edit: %v", err)
	}
	if content(t, w.inFile) != "changed by hand" {
		t.Fatal("the refused undo wrote")
	}
	write(t, w.inFile, "changed")
	if _, err := Undo(a.log, "s", 0); err != nil || content(t, w.inFile) != "inside" {
		t.Fatalf("undo = %v, content %q", err, content(t, w.inFile))
	}
	if _, err := Undo(a.log, "s", 0); err != ErrNothingToUndo {
		t.Fatalf("nothing left: %v", err)
	}
}
