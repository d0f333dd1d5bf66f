package sessions

import (
	"fmt"
	"testing"
)

// BenchmarkAppend is the cost of saving one finished message: one
// transaction with its fsync, which is what a turn pays per message.
func BenchmarkAppend(b *testing.B) {
	s := newStore(b)
	sess, err := s.Create(Meta{})
	if err != nil {
		b.Fatal(err)
	}
	msg := sample()[1]
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(sess.ID, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad2000 opens a long session (2,000 messages), as --continue
// and /sessions do.
func BenchmarkLoad2000(b *testing.B) {
	s := newStore(b)
	sess, _ := s.Create(Meta{})
	msgs := sample()
	var batch []Message
	for len(batch) < 2000 {
		batch = append(batch, msgs...)
	}
	if err := s.Append(sess.ID, batch[:2000]...); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, got, err := s.Load(sess.ID)
		if err != nil || len(got) != 2000 {
			b.Fatalf("%d messages, %v", len(got), err)
		}
	}
}

// BenchmarkList50Of1000 lists the 50 most recent of 1,000 sessions, as the
// /sessions picker does.
func BenchmarkList50Of1000(b *testing.B) {
	s := newStore(b)
	for i := range 1000 {
		if _, err := s.Create(Meta{Title: fmt.Sprint("session ", i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		list, err := s.List(50)
		if err != nil || len(list) != 50 {
			b.Fatalf("%d sessions, %v", len(list), err)
		}
	}
}

// branchyTree is a 2,000-message conversation in which every tenth
// answer was asked for again once.
func branchyTree() *Tree {
	tr := &Tree{}
	for i := 0; len(tr.Messages) < 2000; i++ {
		q := tr.Append(Message{Role: RoleUser, Content: "question"})
		tr.Append(Message{Role: RoleAssistant, Content: "answer"})
		if i%10 == 0 {
			tr.Branch(q.Seq, ReasonRetry, t0)
			tr.Append(Message{Role: RoleAssistant, Content: "answer again"})
		}
	}
	return tr
}

// BenchmarkTreeCurrentPath is what opening a session or flipping an
// attempt costs to find the line the model sees.
func BenchmarkTreeCurrentPath(b *testing.B) {
	tr := branchyTree()
	b.ReportAllocs()
	for b.Loop() {
		if len(tr.CurrentPath()) == 0 {
			b.Fatal("empty path")
		}
	}
}

// BenchmarkTreeForks finds every answer's attempts, as the workbench does
// after each turn and flip to mark them.
func BenchmarkTreeForks(b *testing.B) {
	tr := branchyTree()
	b.ReportAllocs()
	for b.Loop() {
		if len(tr.Forks()) == 0 {
			b.Fatal("no forks")
		}
	}
}
