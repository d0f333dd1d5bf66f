package tui

import (
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// headerWindow is the header's word on the window ("ctx …"), "" when it
// shows none.
func headerWindow(m *model) string {
	return regexp.MustCompile(`ctx ~?[\d.]+k? of [\d.]+k? tokens \(\d+%\)`).FindString(m.headerView())
}

// The header's ctx figure follows what changes the next request: /ctx
// gives it the new window, /new and opening a session another
// conversation's (estimated until the first request), never the last
// conversation's figure.
func TestHeaderWindowFollowsNewAndCtx(t *testing.T) {
	srv := fakeServer(t)
	l := newLive(t, srv, "", false)
	l.update(tea.WindowSizeMsg{Width: 160, Height: 30})
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")
	l.typeLine("And 20% of 340?")
	after := headerWindow(l.m)
	if !strings.HasPrefix(after, "ctx ") || strings.HasPrefix(after, "ctx ~") {
		t.Fatalf("after two questions the header says %q, want the server's count", after)
	}
	prompt := l.m.lastPrompt

	l.typeLine("/ctx 16384")
	if got := headerWindow(l.m); !strings.Contains(got, " of 16.4k tokens") || l.m.lastPrompt != prompt {
		t.Errorf("after /ctx 16384 the header says %q (prompt %d, was %d)", got, l.m.lastPrompt, prompt)
	}

	l.typeLine("/new")
	got := headerWindow(l.m)
	if !strings.HasPrefix(got, "ctx ~") || !strings.Contains(got, " of 16.4k tokens") || l.m.lastPrompt >= prompt {
		t.Errorf("after /new the header says %q (prompt %d; the old conversation's was %d)", got, l.m.lastPrompt, prompt)
	}

	l.typeLine("/ctx auto")
	if got := headerWindow(l.m); strings.Contains(got, "16.4k") || got == "" {
		t.Errorf("after /ctx auto the header says %q", got)
	}
}
