package sessions

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/asdine/storm/v3"
)

// contents lists the contents of msgs, for comparing paths.
func contents(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

func seqs(msgs []Message) []int {
	out := make([]int, len(msgs))
	for i, m := range msgs {
		out[i] = m.Seq
	}
	return out
}

// buildTree appends messages to a tree as the workbench does: each on
// the current branch.
func buildTree(t *Tree, msgs ...Message) {
	for _, m := range msgs {
		t.Append(m)
	}
}

func user(s string) Message { return Message{Role: RoleUser, Content: s} }
func reply(s string) Message {
	return Message{Role: RoleAssistant, Content: s, Usage: &Usage{PromptTokens: 10, OutputTokens: 5}}
}

func TestTreePathsAlternativesAndLatest(t *testing.T) {
	tr := &Tree{}
	buildTree(tr, user("q1"), reply("a1"), user("q2"), reply("a2 first"))
	// /retry on q2 (seq 3): the answer goes on a branch after it.
	retry := tr.Branch(3, ReasonRetry, t0)
	buildTree(tr, reply("a2 second"))
	if got := contents(tr.CurrentPath()); !reflect.DeepEqual(got, []string{"q1", "a1", "q2", "a2 second"}) {
		t.Fatalf("path after retry = %v", got)
	}
	if got := contents(tr.Path("")); !reflect.DeepEqual(got, []string{"q1", "a1", "q2", "a2 first"}) {
		t.Fatalf("the first line = %v", got)
	}
	alts := tr.Alternatives(3)
	if !reflect.DeepEqual(alts, []Alternative{{Branch: "", First: 4}, {Branch: retry.ID, First: 5}}) {
		t.Fatalf("alternatives at q2 = %+v", alts)
	}
	// Retrying again while on the retry branch makes a sibling, not a
	// child: the question belongs to the first line.
	again := tr.Branch(3, ReasonRetry, t0.Add(time.Second))
	if again.Parent != "" || again.After != 3 {
		t.Fatalf("second retry = %+v", again)
	}
	buildTree(tr, reply("a2 third"), user("q3"), reply("a3"))
	if n := len(tr.Alternatives(3)); n != 3 {
		t.Fatalf("%d alternatives at q2, want 3", n)
	}
	if forks := tr.Forks(); len(forks) != 1 || len(forks[3]) != 3 {
		t.Fatalf("forks = %+v", forks)
	}
	// Edit q1 (seq 1): a branch after nothing.
	edit := tr.Branch(0, ReasonEdit, t0.Add(2*time.Second))
	buildTree(tr, user("q1 edited"), reply("a1 edited"))
	if got := contents(tr.CurrentPath()); !reflect.DeepEqual(got, []string{"q1 edited", "a1 edited"}) {
		t.Fatalf("path after editing the first question = %v", got)
	}
	if alts := tr.Alternatives(0); len(alts) != 2 || alts[0].First != 1 || alts[1].Branch != edit.ID {
		t.Fatalf("alternatives at the start = %+v", alts)
	}
	// Flipping back to the first question shows the latest line through
	// it: the third attempt and what followed.
	if got := tr.Latest(1); got != again.ID {
		t.Fatalf("latest through q1 = %q, want %q", got, again.ID)
	}
	if got := contents(tr.Path(tr.Latest(4))); !reflect.DeepEqual(got, []string{"q1", "a1", "q2", "a2 first"}) {
		t.Fatalf("latest through the first attempt = %v", got)
	}
	// A branch that leaves another branch inherits only up to its point.
	tr.Current = again.ID
	deep := tr.Branch(7, ReasonRetry, t0.Add(3*time.Second)) // after q3 (seq 7)
	buildTree(tr, reply("a3 again"))
	if deep.Parent != again.ID {
		t.Fatalf("branch after q3 has parent %q, want %q", deep.Parent, again.ID)
	}
	if got := contents(tr.CurrentPath()); !reflect.DeepEqual(got, []string{"q1", "a1", "q2", "a2 third", "q3", "a3 again"}) {
		t.Fatalf("nested path = %v", got)
	}
	if got := seqs(tr.CurrentPath()); !reflect.DeepEqual(got, []int{1, 2, 3, 6, 7, 11}) {
		t.Fatalf("nested path seqs = %v", got)
	}
}

func TestBranchesAreStoredAndReopened(t *testing.T) {
	s := newStore(t)
	sess, err := s.Create(Meta{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	tr := &Tree{}
	save := func(msgs ...Message) {
		t.Helper()
		for _, m := range msgs {
			if err := s.Append(sess.ID, tr.Append(m)); err != nil {
				t.Fatal(err)
			}
		}
	}
	save(user("q1"), reply("a1"))
	b := tr.Branch(1, ReasonRetry, t0)
	if err := s.NewBranch(sess.ID, b); err != nil {
		t.Fatal(err)
	}
	save(reply("a1 again"))

	got, msgs, err := s.Load(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Branch != b.ID || len(got.Branches) != 1 || got.Branches[0].After != 1 {
		t.Fatalf("stored session = %+v", got)
	}
	if got.Totals.Turns != 2 || got.Messages != 3 {
		t.Errorf("totals count every attempt: %+v, %d messages", got.Totals, got.Messages)
	}
	if path := contents(TreeOf(got, msgs).CurrentPath()); !reflect.DeepEqual(path, []string{"q1", "a1 again"}) {
		t.Fatalf("reopened path = %v", path)
	}
	// Flipping back is remembered.
	if err := s.SetBranch(sess.ID, ""); err != nil {
		t.Fatal(err)
	}
	got, msgs, _ = s.Load(sess.ID)
	if path := contents(TreeOf(got, msgs).CurrentPath()); !reflect.DeepEqual(path, []string{"q1", "a1"}) {
		t.Fatalf("path after switching back = %v", path)
	}

	// What cannot be stored is refused with the reason.
	for _, c := range []struct {
		err func() error
		say string
	}{
		{func() error { return s.SetBranch(sess.ID, "nope") }, `no branch "nope"`},
		{func() error { return s.NewBranch(sess.ID, Branch{ID: "x", After: 9}) }, "no message 9"},
		{func() error { return s.NewBranch(sess.ID, Branch{ID: b.ID, After: 1}) }, "already has a branch"},
		{func() error { return s.NewBranch(sess.ID, Branch{ID: "y", Parent: "zz", After: 1}) }, `no branch "zz"`},
		{func() error { return s.Append(sess.ID, Message{Role: RoleUser, Content: "x", Branch: "ghost"}) }, `no branch "ghost"`},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.say) {
			t.Errorf("got %v, want an error saying %q", err, c.say)
		}
	}
}

func png(n byte) []byte {
	return append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{n}, 64)...)
}

// blobCount counts which of the images are stored.
func blobCount(t *testing.T, s *Store, images ...[]byte) int {
	t.Helper()
	n := 0
	err := s.view(func(node storm.Node) error {
		for _, im := range images {
			ok, err := blobExists(node, Hash(im))
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImagesAreStoredOnceAndSharedByForks(t *testing.T) {
	s := newStore(t)
	a, _ := s.Create(Meta{})
	b, _ := s.Create(Meta{})
	cat, dog := png(1), png(2)
	msg := func(text string, data ...[]byte) Message {
		m := user(text)
		for i, d := range data {
			m.Images = append(m.Images, Image{Name: "pic" + string(rune('0'+i)) + ".png", MIMEType: "image/png", Width: 4, Height: 3, Data: d})
		}
		return m
	}
	if err := s.Append(a.ID, msg("two", cat, dog), reply("ok")); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(b.ID, msg("the same cat", cat)); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, s, cat, dog); n != 2 {
		t.Fatalf("%d blobs stored, want 2 (the cat once)", n)
	}
	_, msgs, err := s.Load(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	im := msgs[0].Images[0]
	if im.Data != nil || im.SHA256 != Hash(cat) || im.Bytes != len(cat) || im.Width != 4 || im.Name != "pic0.png" {
		t.Fatalf("loaded image reference = %+v", im)
	}
	if err := s.FillImages(msgs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(msgs[0].Images[0].Data, cat) || !bytes.Equal(msgs[0].Images[1].Data, dog) {
		t.Fatal("FillImages did not give the bytes back")
	}

	fork, err := s.Fork(a.ID, "", 1, Meta{Model: "vision"})
	if err != nil {
		t.Fatal(err)
	}
	if fork.Parent != a.ID || fork.ParentSeq != 1 || fork.Messages != 1 {
		t.Fatalf("fork = %+v", fork)
	}
	// Deleting the original keeps what the fork and b still use.
	if err := s.Delete(a.ID); err != nil {
		t.Fatal(err)
	}
	_, fmsgs, err := s.Load(fork.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FillImages(fmsgs); err != nil {
		t.Fatalf("the fork lost its images with its parent: %v", err)
	}
	if err := s.Delete(fork.ID); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, s, cat, dog); n != 1 {
		t.Fatalf("%d blobs left, want 1 (the cat b still shows)", n)
	}
	if err := s.Delete(b.ID); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, s, cat, dog); n != 0 {
		t.Fatalf("%d blobs left after every session is gone", n)
	}

	// Bytes that do not match their hash are refused.
	c, _ := s.Create(Meta{})
	bad := msg("x", cat)
	bad.Images[0].SHA256 = Hash(dog)
	if err := s.Append(c.ID, bad); err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Fatalf("mismatched hash: %v", err)
	}
}

func TestForkCopiesTheCurrentLine(t *testing.T) {
	s := newStore(t)
	sess, _ := s.Create(Meta{Title: "origin"})
	tr := &Tree{}
	for _, m := range []Message{user("q1"), reply("a1"), user("q2"), reply("a2")} {
		if err := s.Append(sess.ID, tr.Append(m)); err != nil {
			t.Fatal(err)
		}
	}
	br := tr.Branch(3, ReasonRetry, t0)
	if err := s.NewBranch(sess.ID, br); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(sess.ID, tr.Append(reply("a2 again"))); err != nil {
		t.Fatal(err)
	}
	whole, err := s.Fork(sess.ID, br.ID, 0, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	got, msgs, _ := s.Load(whole.ID)
	if c := contents(msgs); !reflect.DeepEqual(c, []string{"q1", "a1", "q2", "a2 again"}) || got.ParentSeq != 5 || got.Title != "origin" {
		t.Fatalf("fork of the branch: %v, %+v", c, got)
	}
	if got.Totals.Turns != 2 {
		t.Errorf("fork totals = %+v, want its two copied replies", got.Totals)
	}
	if _, err := s.Fork(sess.ID, "", 5, Meta{}); err == nil || !strings.Contains(err.Error(), "not on the line") {
		t.Fatalf("forking the first line at a message of another: %v", err)
	}

	// Queued, a fork lands after the writes queued before it.
	more := reply("a3")
	if err := s.AppendQueued(sess.ID, tr.Append(user("q3")), tr.Append(more)); err != nil {
		t.Fatal(err)
	}
	q, err := s.ForkQueued(sess.ID, br.ID, 7, Meta{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, msgs, err = s.Load(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c := contents(msgs); len(c) != 6 || c[5] != "a3" || got.Parent != sess.ID || got.ParentSeq != 7 || got.Model != "m" {
		t.Fatalf("queued fork: %v, %+v", c, got)
	}
}

func TestBranchWritesThroughTheQueue(t *testing.T) {
	s := newStore(t)
	sess, _ := s.CreateQueued(Meta{})
	tr := &Tree{}
	if err := s.AppendQueued(sess.ID, tr.Append(user("q")), tr.Append(reply("a"))); err != nil {
		t.Fatal(err)
	}
	b := tr.Branch(1, ReasonRetry, t0)
	if err := s.NewBranchQueued(sess.ID, b); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendQueued(sess.ID, tr.Append(reply("again"))); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBranchQueued(sess.ID, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, msgs, err := s.Load(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	tree := TreeOf(got, msgs)
	if got.Branch != "" || !tree.Has(b.ID) || !reflect.DeepEqual(contents(tree.Path(b.ID)), []string{"q", "again"}) {
		t.Fatalf("after the queue: %+v %v", got, contents(msgs))
	}
}
