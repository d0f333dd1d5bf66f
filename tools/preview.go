package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/internal/textdiff"
)

// A tool that changes files works out the change before anyone is asked,
// so the person approves what will happen and not a description of it:
// the dialog shows the diff of every file, `e` edits the resulting
// content, and what runs is what was shown (the tool refuses to write when
// a file changed after the question).

// FileChange is one file as a call would leave it.
type FileChange struct {
	// Path is the file as resolved (absolute, links followed); Shown is
	// how to name it to the person (relative to the working directory
	// when it is inside).
	Path  string
	Shown string
	// Old and New are the content before and after; OldExists and
	// NewExists say whether the file is there before and after (a file
	// created, deleted).
	Old, New             string
	OldExists, NewExists bool
	// Mode is the file's permission bits after the change.
	Mode uint32
}

// Preview is what a call would change.
type Preview struct {
	Files []FileChange
	// Rebuild turns the person's edit of the resulting contents (one per
	// file, in the order of Files) into the arguments of the same tool
	// that make exactly those contents; nil when the contents cannot be
	// edited that way.
	Rebuild func(contents []string) (Args, error)
	// Note says what the tool adjusted to make the change ("the hunk
	// header's line counts were wrong; recounted"), shown with the diff.
	Note string
}

// Previewer is implemented by tools whose calls change files: Preview
// works out the change for these arguments (reading the files, touching
// nothing). An error means the call cannot work (old_string missing, a
// patch that does not apply): the call fails with it, before anyone is
// asked.
//
// ctx carries the call (CallOf: its session, whose reads decide whether a
// file may be changed); it is not the call's own deadline.
type Previewer interface {
	Preview(ctx context.Context, args Args) (*Preview, error)
}

// previewFor runs a Previewer; one that panics fails the call.
func previewFor(ctx context.Context, p Previewer, args Args) (pv *Preview, err error) {
	defer func() {
		if r := recover(); r != nil {
			pv, err = nil, fmt.Errorf("the change could not be worked out: %v", r)
		}
	}()
	return p.Preview(ctx, args)
}

type (
	previewKey struct{}
	callKey    struct{}
)

// Approved returns the change the person approved (or that ran unasked
// after being worked out) for the call ctx runs, nil when the tool has no
// preview. A tool compares it with what it is about to write.
func Approved(ctx context.Context) *Preview {
	p, _ := ctx.Value(previewKey{}).(*Preview)
	return p
}

// CallInfo is what a running tool knows of its call beyond the
// arguments.
type CallInfo struct {
	// ID is the call's id (the model's), Session the session it belongs
	// to ("" when the run keeps none).
	ID, Session string
	// output publishes what the call has produced so far.
	output func(string)
}

// CallOf returns the call a tool runs for (zero outside the executor).
func CallOf(ctx context.Context) CallInfo {
	c, _ := ctx.Value(callKey{}).(CallInfo)
	return c
}

// Output streams text a running call produced (a command's output as it
// comes) to the front ends, which show it while the call runs; the
// result stays what the model reads. It may be dropped for a slow
// subscriber, as token deltas are.
func Output(ctx context.Context, text string) {
	if c := CallOf(ctx); c.output != nil && text != "" {
		c.output(text)
	}
}

// Diff is the unified diff of the change, file after file.
func (p *Preview) Diff() string {
	var b strings.Builder
	for _, f := range p.Files {
		b.WriteString(textdiff.Unified(strings.TrimPrefix(f.Shown, "./"), f.Old, f.New, f.OldExists, f.NewExists))
	}
	return b.String()
}
