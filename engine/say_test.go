package engine

import (
	"fmt"
	"strings"
	"testing"
)

var flags = Controls{
	Agent:  func(n string) string { return "--agent " + n },
	Window: func(n int) string { return fmt.Sprintf("--num-ctx %d", n) },
	Model:  func() string { return "--model" },
}

// Advice names controls with placeholders: each front end renders them
// in its own words, the message of the error in plain words, and text
// that is not a placeholder (a chat template) is left as it is.
func TestAdviceIsWordedByTheFrontEnd(t *testing.T) {
	s := "use {{agent react}} or raise the window ({{window 8192}}); {{ .Content }} stays"
	if got := Say(s, flags); got != "use --agent react or raise the window (--num-ctx 8192); {{ .Content }} stays" {
		t.Fatalf("Say = %q", got)
	}
	if got := Say(s, Plain); strings.Contains(got, "--") || !strings.Contains(got, "the react agent") {
		t.Fatalf("plain = %q", got)
	}
	err := fmt.Errorf("asking qwen3: %w", &ToolsUnsupportedError{Model: "qwen3"})
	if strings.Contains(err.Error(), "{{") || strings.Contains(err.Error(), "--agent") {
		t.Fatalf("Error() = %q", err.Error())
	}
	if got := Explain(err, flags); !strings.HasPrefix(got, "asking qwen3: ") || !strings.Contains(got, "--agent react") {
		t.Fatalf("Explain = %q", got)
	}
	both := fmt.Errorf("two: %w", &UnreachableError{Host: "h", Err: fmt.Errorf("refused")})
	if got := Explain(both, Controls{Host: func() string { return "--host" }}); !strings.Contains(got, "elsewhere with --host or OLLAMA_HOST") {
		t.Fatalf("Explain through Unwrap() []error = %q", got)
	}
}
