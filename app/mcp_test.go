package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A failing MCP server's retries are one note, said again only after it
// came back; a tool left out is a note; nothing is a raw log line.
func TestMCPNotesSayEachThingOnce(t *testing.T) {
	var b bytes.Buffer
	notes := newMCPNotes(&b, true)
	log := slog.New(notes).With("mcp_server", "files")
	log.Warn("mcp server failed", "reason", "said after the wait", "retry_in", "1s")
	if b.Len() != 0 {
		t.Fatalf("spoke while waiting: %q", b.String())
	}
	notes.speak()
	for range 3 {
		log.Warn("mcp server failed", "reason", "cannot start npx: no such file or directory", "retry_in", "2s")
	}
	log.Info("mcp server ready", "tools", 3)
	log.Warn("mcp server failed", "reason", "the server process crashed", "retry_in", "1s")
	log.Warn("mcp tool skipped", "reason", "search: its input schema cannot be read")
	log.Warn("mcp tool skipped", "reason", "search: its input schema cannot be read")
	want := "note: MCP server files failed: cannot start npx: no such file or directory; jarvis starts it again in the background, and its tools are back when it is\n" +
		"note: MCP server files failed: the server process crashed; jarvis starts it again in the background, and its tools are back when it is\n" +
		"note: MCP server files: a tool is left out: search: its input schema cannot be read\n"
	if b.String() != want {
		t.Fatalf("notes:\n%s\nwant:\n%s", b.String(), want)
	}
	if strings.Contains(b.String(), "level=") {
		t.Fatal("a raw log line")
	}
}
