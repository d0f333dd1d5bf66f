package events

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestMustDeliverEventsWaitForSlowSubscriber(t *testing.T) {
	b := New()
	sub := b.Subscribe(1)
	defer sub.Close()
	b.Publish(Event{Type: ToolCallStart})
	done := make(chan struct{})
	go func() {
		b.Publish(Event{Type: ToolCallEnd}) // buffer full: must wait, not drop
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("a must-deliver event was not held for a full subscriber")
	case <-time.After(50 * time.Millisecond):
	}
	if e := <-sub.C; e.Type != ToolCallStart {
		t.Fatalf("first = %s", e.Type)
	}
	<-done
	if e := <-sub.C; e.Type != ToolCallEnd || e.Time.IsZero() {
		t.Fatalf("second = %+v", e)
	}
}

func TestDeltasAreDroppedForFullSubscriber(t *testing.T) {
	b := New()
	sub := b.Subscribe(2)
	defer sub.Close()
	for i := 0; i < 5; i++ {
		b.Publish(Event{Type: Token, Text: "x"})
	}
	if got := sub.Dropped(); got != 3 {
		t.Fatalf("dropped %d, want 3", got)
	}
	if len(sub.C) != 2 {
		t.Fatalf("buffered %d", len(sub.C))
	}
}

func TestCloseReleasesBlockedPublishers(t *testing.T) {
	b := New()
	sub := b.Subscribe(1)
	b.Publish(Event{Type: TurnEnd})
	done := make(chan struct{})
	go func() {
		b.Publish(Event{Type: TurnEnd})
		close(done)
	}()
	time.Sleep(10 * time.Millisecond)
	sub.Close()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("publisher stayed blocked after the subscriber closed")
	}
	// The channel is closed once drained.
	for range sub.C {
	}
	// Closing the bus with a blocked publisher on another subscriber.
	s2 := b.Subscribe(1)
	b.Publish(Event{Type: RunEnd})
	done2 := make(chan struct{})
	go func() { b.Publish(Event{Type: RunEnd}); close(done2) }()
	time.Sleep(10 * time.Millisecond)
	b.Close()
	select {
	case <-done2:
	case <-time.After(2 * time.Second):
		t.Fatal("bus close did not release the publisher")
	}
	for range s2.C {
	}
	if s3 := b.Subscribe(1); s3 != nil {
		if _, ok := <-s3.C; ok {
			t.Fatal("subscribing to a closed bus must give a closed channel")
		}
	}
}

func TestConcurrentPublishAndSubscribe(t *testing.T) {
	b := New()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := b.Subscribe(8)
			go func() {
				for range s.C {
				}
			}()
			time.Sleep(time.Millisecond)
			s.Close()
		}()
	}
	for i := 0; i < 1000; i++ {
		b.Publish(Event{Type: ToolCallEnd})
		b.Publish(Event{Type: Token})
	}
	wg.Wait()
	b.Close()
}

func TestRunInfoOnContext(t *testing.T) {
	ctx := WithRun(context.Background(), RunInfo{ID: "r1", Agent: "react"})
	if got := RunFrom(ctx); got.ID != "r1" || got.Agent != "react" {
		t.Fatalf("got %+v", got)
	}
	if got := RunFrom(context.Background()); got != (RunInfo{}) {
		t.Fatalf("empty context gave %+v", got)
	}
}

func TestUsageAdd(t *testing.T) {
	u := Usage{PromptTokens: 10, OutputTokens: 20, EvalSeconds: 1, CostUSD: 0.5}
	u.Add(Usage{PromptTokens: 5, OutputTokens: 20, EvalSeconds: 1, CostUSD: 0.25})
	if u.PromptTokens != 15 || u.OutputTokens != 40 || u.TokensPerSec != 20 || u.CostUSD != 0.75 {
		t.Fatalf("got %+v", u)
	}
}
