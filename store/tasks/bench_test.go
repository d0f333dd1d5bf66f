package tasks

import (
	"fmt"
	"testing"
	"time"

	"github.com/asdine/storm/v3"
)

// seed stores n active interval tasks in one transaction, the first due of
// them with a next run before t0 and the rest spread over the following
// days, as a large schedule would be.
func seed(b *testing.B, s *Store, n, due int) {
	b.Helper()
	err := s.update(func(node storm.Node) error {
		for i := range n {
			next := t0.Add(time.Duration(i-due+1) * 37 * time.Second)
			if i < due {
				next = t0.Add(-time.Duration(i+1) * time.Second)
			}
			id := fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15)
			row := taskRow{ID: id, Ref: id, Prompt: "check the build and report failures", ScheduleType: Interval,
				ScheduleValue: "3600", Zone: "UTC", Status: Active, NextRun: next, Agent: DefaultAgent, CreatedAt: t0}
			row.Due = row.dueKey()
			if err := node.Save(&row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.db.KeepOpen(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkNextDue10k is what the loop asks before sleeping: the earliest
// next run among 10,000 tasks.
func BenchmarkNextDue10k(b *testing.B) {
	s := openStore(b)
	seed(b, s, 10_000, 0)
	b.ResetTimer()
	for b.Loop() {
		next, ok, err := s.NextDue()
		if err != nil || !ok || !next.Equal(t0.Add(37*time.Second)) {
			b.Fatalf("next %v %v %v", next, ok, err)
		}
	}
}

// BenchmarkDueLookup10k finds the 10 due tasks among 10,000 (the read half
// of a claim).
func BenchmarkDueLookup10k(b *testing.B) {
	s := openStore(b)
	seed(b, s, 10_000, 10)
	b.ResetTimer()
	for b.Loop() {
		err := s.view(func(n storm.Node) error {
			rows, err := dueRows(n, t0, 100)
			if err == nil && len(rows) != 10 {
				err = fmt.Errorf("found %d due tasks, want 10", len(rows))
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFullScan10k is the reference the index avoids: reading every
// task to find the due ones.
func BenchmarkFullScan10k(b *testing.B) {
	s := openStore(b)
	seed(b, s, 10_000, 10)
	b.ResetTimer()
	for b.Loop() {
		var rows []taskRow
		if err := s.view(func(n storm.Node) error { return n.All(&rows) }); err != nil {
			b.Fatal(err)
		}
		due := 0
		for i := range rows {
			if !rows[i].NextRun.After(t0) {
				due++
			}
		}
		if due != 10 {
			b.Fatalf("due %d", due)
		}
	}
}

// BenchmarkCreate10k adds a task to a database of 10,000 (one committed
// transaction each).
func BenchmarkCreate10k(b *testing.B) {
	s := openStore(b)
	seed(b, s, 10_000, 0)
	nt := NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "3600", TimeZone: "UTC"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Create(nt, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundReads10k is what one round of the scheduler's loop reads
// with 10 of 10,000 tasks due and a few schedulers serving: the due tasks,
// the next run after them, and the peer entries.
func BenchmarkRoundReads10k(b *testing.B) {
	s := openStore(b)
	seed(b, s, 10_000, 10)
	for i := range 3 {
		id := fmt.Sprintf("host/%d/x", i)
		if err := s.Beat(Peer{ID: id, Process: Process{PID: i + 1, Command: "tui"}, Beat: t0, Expires: t0.Add(time.Minute),
			Reach: map[string]bool{"ollama http://127.0.0.1:11434": true}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		due, err := s.Due(t0, 256)
		if err != nil || len(due) != 10 {
			b.Fatalf("due %d %v", len(due), err)
		}
		if _, ok, err := s.NextAfter(t0); err != nil || !ok {
			b.Fatalf("next %v %v", ok, err)
		}
		if peers, err := s.Peers(); err != nil || len(peers) != 3 {
			b.Fatalf("peers %d %v", len(peers), err)
		}
	}
}
