package agent

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/engine"
)

// Estimating tokens without the model's tokenizer. No server offers a
// tokenize endpoint, so jarvis counts what a subword tokenizer roughly
// does (a short word is a token, a long one a few, each punctuation mark
// or symbol one, a letter of a script without spaces one) and then
// calibrates the count per model against the prompt_eval_count the server
// reports for what was really sent (see ModelView). The count is a pure
// function of the text, so it is stable from turn to turn, and it runs in
// one pass over the bytes: a 2,000-message conversation is estimated in
// well under a millisecond.

// wordRun is how many letters of a Latin-script word make one token.
const wordRun = 4

// messageOverhead is the tokens a chat template spends around each
// message (role markers, separators).
const messageOverhead = 4

// EstimateTokens returns the uncalibrated token estimate of s.
func EstimateTokens(s string) int {
	n := 0
	run := 0 // length of the current run of ASCII letters and digits
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			k := asciiKind[c]
			if k == kindWord {
				// The rest of the word in a tight loop: most bytes are.
				j := i
				for j < len(s) && s[j] < utf8.RuneSelf && asciiKind[s[j]] == kindWord {
					j++
				}
				run += j - i + 1
				i = j
				continue
			}
			if run > 0 {
				n += (run + wordRun - 1) / wordRun
				run = 0
			}
			if k == kindMark {
				n++ // newlines and marks are tokens of their own in most vocabularies
			}
			continue
		}
		if run > 0 {
			n += (run + wordRun - 1) / wordRun
			run = 0
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		// Accented letters and other scripts: most tokenizers spend about
		// a token per character outside ASCII.
		n++
	}
	if run > 0 {
		n += (run + wordRun - 1) / wordRun
	}
	return n
}

// What an ASCII byte is to the estimate: part of a word, a separator, or
// a token of its own (a newline, a punctuation mark, a symbol).
const (
	kindMark byte = iota
	kindWord
	kindSpace
)

// asciiKind classifies the ASCII bytes in one look-up: the estimate runs
// over every message of every request.
var asciiKind = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			t[c] = kindWord
		case c == ' ' || c == '\t' || c == '\r':
			t[c] = kindSpace
		}
	}
	return t
}()

// estimateMessage is the estimate of one message as the template renders
// it: its texts, its tool calls as JSON, and the template's overhead.
func estimateMessage(m engine.Message) int {
	n := messageOverhead + EstimateTokens(m.Content)
	for _, c := range m.ToolCalls {
		n += EstimateTokens(c.Name) + EstimateTokens(c.Arguments) + messageOverhead
	}
	if m.ToolName != "" {
		n += EstimateTokens(m.ToolName)
	}
	return n
}

// toolJSON is a tool's definition as chat templates render it: the OpenAI
// function format, which is what Ollama's templates print for each tool.
func toolJSON(d engine.ToolDef) string {
	b, err := json.Marshal(map[string]any{
		"type": "function",
		"function": map[string]any{
			"name": d.Name, "description": d.Description, "parameters": d.Parameters,
		},
	})
	if err != nil {
		return d.Name + " " + d.Description
	}
	return string(b)
}
