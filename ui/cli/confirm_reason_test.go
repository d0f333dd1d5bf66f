package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

func TestPromptSaysWhyTheCallAsks(t *testing.T) {
	out, in := newAnswering("n")
	p := newPromptConfirmer(in, out)
	req := tools.ConfirmRequest{Spec: tools.Spec{Name: "file_read", Description: "Reads a file."},
		Arguments: tools.Args{"path": "/etc/hosts"}, Reason: "reads /etc/hosts, outside the working directory"}
	if d, err := p.Confirm(context.Background(), req); d != tools.Deny || err != nil {
		t.Fatalf("decision %v %v", d, err)
	}
	if !strings.Contains(out.String(), "Tool 'file_read' needs your approval: it reads /etc/hosts, outside the working directory.\n") {
		t.Errorf("prompt: %q", out.String())
	}
}

// answering is a terminal that types the next answer each time a question
// is written to it (a "[y/N]" prompt), as a person reads and then answers; what was
// written to it is in out.
type answering struct {
	mu      sync.Mutex
	out     bytes.Buffer
	answers []string
	w       *io.PipeWriter
}

// newAnswering returns the terminal and the input side the confirmer
// reads.
func newAnswering(answers ...string) (*answering, io.Reader) {
	r, w := io.Pipe()
	return &answering{answers: answers, w: w}, r
}

func (a *answering) Write(b []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.out.Write(b)
	if bytes.Contains(b, []byte("[y/N]")) && len(a.answers) > 0 {
		next := a.answers[0]
		a.answers = a.answers[1:]
		go a.w.Write([]byte(next + "\n"))
	}
	return len(b), nil
}

func (a *answering) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.String()
}

// A line typed before a question was shown never answers it: the person
// had not read it.
func TestTypedAheadLinesDoNotAnswer(t *testing.T) {
	in, w := io.Pipe()
	var out bytes.Buffer
	p := newPromptConfirmer(in, &out)
	if _, err := w.Write([]byte("y\n")); err != nil { // typed while the model worked
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the reader has the line
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req := tools.ConfirmRequest{Spec: tools.Spec{Name: "code_interpreter"}, Arguments: tools.Args{"code": "1"}}
	if d, err := p.Confirm(ctx, req); d != tools.Deny || err == nil {
		t.Fatalf("a line typed ahead answered: %v %v", d, err)
	}
	w.Close()
}

// The prompt names what "a" and "always" grant: the directory of a read
// outside, and for code the exact code for the session, the whole tool
// always, after a second question.
func TestPromptNamesTheGrant(t *testing.T) {
	dir := tools.Scope{Kind: tools.ScopeDir, Value: "/etc", Words: "reads in /etc (not its subfolders)"}
	term, in := newAnswering("always")
	p := newPromptConfirmer(in, term)
	req := tools.ConfirmRequest{Spec: tools.Spec{Name: "file_read"}, Arguments: tools.Args{"path": "/etc/hosts"}, Scope: dir, CanAlways: true, Position: 1, Of: 2}
	if d, err := p.Confirm(context.Background(), req); d != tools.AllowAlways || err != nil {
		t.Fatalf("always for a directory: %v %v", d, err)
	}
	for _, want := range []string{"(call 1 of 2)", "a: allow reads in /etc (not its subfolders) for the rest of the session", "always: always allow reads in /etc"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("prompt lacks %q:\n%s", want, term.String())
		}
	}

	code := tools.ExactArguments(tools.Args{"code": "print(1)"}, "this exact code")
	term, in = newAnswering("always", "no")
	p = newPromptConfirmer(in, term)
	req = tools.ConfirmRequest{Spec: tools.Spec{Name: "code_interpreter"}, Arguments: tools.Args{"code": "print(1)"}, Scope: code, CanAlways: true}
	if d, _ := p.Confirm(context.Background(), req); d != tools.AllowOnce {
		t.Fatalf("always refused at the second question: %v", d)
	}
	if !strings.Contains(term.String(), "a: allow this exact code for the rest of the session") ||
		!strings.Contains(term.String(), "with any arguments, in every session") {
		t.Errorf("prompt:\n%s", term.String())
	}
	term, in = newAnswering("always", "y")
	p = newPromptConfirmer(in, term)
	if d, _ := p.Confirm(context.Background(), req); d != tools.AllowAlways {
		t.Fatalf("always confirmed: %v", d)
	}
}
