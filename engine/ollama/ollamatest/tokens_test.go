package ollamatest

import (
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
)

func TestCountTokens(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"   \n\t", 0},
		{"hi", 1},
		{"abc", 1},
		{"abcd", 2},
		{"question", 3},
		{"be brief", 3},
		{"second question", 5},
		{`{"a":1}`, 7},
		{"2+2=4", 5},
		{"héllo wörld", 4}, // letters are runes, not bytes
		{"user: hi\nassistant: ", 8},
	}
	for _, c := range cases {
		if got := CountTokens(c.text); got != c.want {
			t.Errorf("CountTokens(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	// Not characters/4: prose costs more than the naive estimate, JSON
	// far more, by a factor that stays put as the text grows.
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	schema := strings.Repeat(`{"type":"object","properties":{"expression":{"type":"string"}}},`, 40)
	naive := func(s string) float64 { return float64(len(s)) / 4 }
	if f := float64(CountTokens(prose)) / naive(prose); f < 1.2 || f > 2 {
		t.Errorf("prose: %.2f times the naive estimate", f)
	}
	if f := float64(CountTokens(schema)) / naive(schema); f < 1.8 {
		t.Errorf("JSON: %.2f times the naive estimate", f)
	}
}

func TestTokenPiecesAndCut(t *testing.T) {
	for _, s := range []string{"", "  ", "hello world", " The quick brown fox,\n\n- first item\n", "a1b2c3d4", "  lead and trail  "} {
		pieces := tokenPieces(s)
		if strings.Join(pieces, "") != s {
			t.Errorf("pieces of %q do not rebuild it: %q", s, pieces)
		}
		if n := CountTokens(s); n > 0 && len(pieces) != n {
			t.Errorf("%q: %d pieces for %d tokens: %q", s, len(pieces), n, pieces)
		}
		for _, p := range pieces {
			if CountTokens(p) > 1 {
				t.Errorf("%q: piece %q holds %d tokens", s, p, CountTokens(p))
			}
		}
	}
	if got := tokenPieces(" The quick"); strings.Join(got, "|") != " The| qui|ck" {
		t.Errorf("pieces = %q", got)
	}
	cuts := []struct {
		text string
		n    int
		want string
	}{
		{"It is fifty-one.", 3, "It is fif"},
		{"It is fifty-one.", 0, ""},
		{"It is fifty-one.", 99, "It is fifty-one."},
		{"one two", 1, "one"}, // no dangling space
	}
	for _, c := range cuts {
		if got := cutTokens(c.text, c.n); got != c.want || CountTokens(got) != min(c.n, CountTokens(c.text)) {
			t.Errorf("cutTokens(%q, %d) = %q, want %q", c.text, c.n, got, c.want)
		}
	}
}

func TestTemplates(t *testing.T) {
	calc := api.Tool{Type: "function", Function: api.ToolFunction{
		Name: "calculator", Description: "Evaluates arithmetic.",
		Parameters: api.ToolFunctionParameters{Type: "object", Required: []string{"expression"}, Properties: api.NewToolPropertiesMap()},
	}}
	calc.Function.Parameters.Properties.Set("expression", api.ToolProperty{Type: api.PropertyType{"string"}, Description: "e.g. 2+2"})
	args := api.NewToolCallFunctionArguments()
	args.Set("expression", "2+2")
	msgs := []api.Message{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: "hi"},
	}

	// The note's rendering of a model whose template lists tool names.
	got, err := Render(TemplateNames, msgs, []api.Tool{calc})
	if want := "Tools: calculator\nsystem: be brief\nuser: hi\nassistant: "; err != nil || got != want {
		t.Errorf("names template:\n%q\nwant\n%q (%v)", got, want, err)
	}

	// The default renders each tool's JSON definition, and tool calls
	// and results in history.
	history := append(msgs,
		api.Message{Role: "assistant", ToolCalls: []api.ToolCall{{ID: "call_1", Function: api.ToolCallFunction{Name: "calculator", Arguments: args}}}},
		api.Message{Role: "tool", ToolName: "calculator", ToolCallID: "call_1", Content: "4"},
		api.Message{Role: "assistant", Content: "Checking.", ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "calculator", Arguments: args}}}},
	)
	got, err = Render("", history, []api.Tool{calc})
	want := "Tools:\n" +
		`{"type":"function","function":{"name":"calculator","description":"Evaluates arithmetic.","parameters":{"type":"object","required":["expression"],"properties":{"expression":{"type":"string","description":"e.g. 2+2"}}}}}` + "\n" +
		"system: be brief\nuser: hi\n" +
		`assistant: {"name":"calculator","arguments":{"expression":"2+2"}}` + "\n" +
		"tool (calculator): 4\n" +
		`assistant: Checking. {"name":"calculator","arguments":{"expression":"2+2"}}` + "\n" +
		"assistant: "
	if err != nil || got != want {
		t.Errorf("json template:\n%s\nwant\n%s (%v)", got, want, err)
	}
	if plain, _ := Render(TemplateJSON, msgs, nil); plain != "system: be brief\nuser: hi\nassistant: " {
		t.Errorf("no tools: %q", plain)
	}

	// A template of one's own, in Go template syntax.
	got, err = Render(`{{ range .Messages }}<{{ .Role }}>{{ .Content }}{{ end }}<assistant>`, msgs, nil)
	if err != nil || got != "<system>be brief<user>hi<assistant>" {
		t.Errorf("custom template: %q (%v)", got, err)
	}
	// A template Ollama ships, by its name.
	got, err = Render("chatml", msgs, nil)
	if want := "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"; err != nil || got != want {
		t.Errorf("chatml: %q (%v)", got, err)
	}
	for _, bad := range []string{"chatml-x", "{{ .Messages"} {
		if _, err := Render(bad, msgs, nil); err == nil {
			t.Errorf("template %q accepted", bad)
		}
	}
}

// fit finds the same start as the real server's one-message-at-a-time
// loop, whatever the mix of roles and sizes.
func TestFitMatchesTheServersLoop(t *testing.T) {
	tmpl, err := parseTemplate("", "")
	if err != nil {
		t.Fatal(err)
	}
	linear := func(msgs []api.Message, window int) (string, int) {
		for i := 0; i < len(msgs); i++ {
			var kept []api.Message
			for _, m := range msgs[:i] {
				if m.Role == "system" {
					kept = append(kept, m)
				}
			}
			p, _ := tmpl.render(append(kept, msgs[i:]...), nil, nil)
			if CountTokens(p) <= window || i == len(msgs)-1 {
				return p, i
			}
		}
		return "", 0
	}
	roles := []string{"user", "assistant", "system", "tool", "user", "assistant"}
	for seed := range 300 {
		n := 1 + seed%13
		var msgs []api.Message
		for i := range n {
			words := 1 + (seed*7+i*13)%40
			msgs = append(msgs, api.Message{Role: roles[(seed+i*5)%len(roles)], Content: strings.Repeat("word ", words)})
		}
		window := 10 + (seed*37)%300
		want, start := linear(msgs, window)
		f, err := tmpl.fit(msgs, nil, nil, window, true)
		if err != nil {
			t.Fatal(err)
		}
		dropped := 0
		for _, m := range msgs[:start] {
			if m.Role != "system" {
				dropped++
			}
		}
		if f.prompt != want || f.cutMessages != dropped || (f.cutTokens == 0 && f.tokens != CountTokens(want)) || min(CountTokens(want), window) != f.tokens {
			t.Fatalf("seed %d (%d messages, window %d): fit kept %q (%d dropped), the loop %q (%d dropped)", seed, n, window, f.prompt, f.cutMessages, want, dropped)
		}
	}
}
