package mcp

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's progress notifications reach the call's output as they come,
// a line each, while the result stays the server's answer.
func TestProgressNotificationsAreTheCallsOutput(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, sc.Name)
		bus := &recorder{}
		e := executor(t, m, tools.ExecutorOptions{Bus: bus, Confirmer: tools.AllowAll})
		// The notifications come before the answer, which waits a
		// moment: the client handles them on their own goroutine, and
		// one handled after the call ended is of no use to anybody.
		r := e.Execute(ctxTimeout(t, 20e9), call("test__sleep", `{"seconds":0.2,"steps":3}`))
		if !r.Success || r.Content != "slept 0.2s" {
			t.Fatalf("result %+v", r)
		}
		var got strings.Builder
		for _, ev := range bus.ofType(events.ToolOutput) {
			if ev.Tool.CallID != "c1" || ev.Tool.Tool != "test__sleep" {
				t.Errorf("output of %+v", ev.Tool)
			}
			got.WriteString(ev.Text)
		}
		want := "progress 1 of 3: step 1\x1b[31m done\nprogress 2 of 3: step 2\x1b[31m done\nprogress 3 of 3: step 3\x1b[31m done\n"
		if got.String() != want {
			t.Errorf("output %q, want %q", got.String(), want)
		}
	})
}

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		p    sdkProgress
		want string
	}{
		{sdkProgress{Progress: 40, Total: 100, Message: "indexing\nfiles"}, "progress 40%: indexing files\n"},
		{sdkProgress{Progress: 7}, "progress 7\n"},
		{sdkProgress{Progress: 2, Total: 5, Message: "  "}, "progress 2 of 5\n"},
	} {
		if got := progressLine(&c.p); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}

type sdkProgress = sdk.ProgressNotificationParams
