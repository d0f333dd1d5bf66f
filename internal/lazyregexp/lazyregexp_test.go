package lazyregexp

import "testing"

func TestCompilesOnceOnFirstUse(t *testing.T) {
	before := Count()
	re := New(`a(b+)c`)
	if Count() != before+1 {
		t.Fatalf("Count went from %d to %d, want one more", before, Count())
	}
	if got := re().FindStringSubmatch("xabbbc"); len(got) != 2 || got[1] != "bbb" {
		t.Errorf("match: %q", got)
	}
	first, second := re(), re()
	if first != second {
		t.Error("each call compiled the expression again")
	}
}

func TestCheckFindsAnInvalidExpression(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatalf("valid expressions only, yet: %v", err)
	}
	bad := New(`a(b`)
	defer func() {
		mu.Lock()
		all = all[:len(all)-1]
		mu.Unlock()
	}()
	if err := Check(); err == nil {
		t.Error("Check passed an expression that does not compile")
	}
	defer func() {
		if recover() == nil {
			t.Error("using an invalid expression did not panic")
		}
	}()
	bad()
}
