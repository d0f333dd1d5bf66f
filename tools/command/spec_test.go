package command

import (
	"errors"
	"strings"
	"testing"
)

func TestBadEntriesNameTheSettingAtFault(t *testing.T) {
	word := map[string]Param{"word": str("the word", true)}
	cases := []struct {
		name    string
		spec    Spec
		key     string
		message string
	}{
		{"unknown placeholder", Spec{Argv: []string{"grep", "{wrod}"}, Parameters: word}, "argv[1]", "did you mean {word}"},
		{"placeholder split across elements", Spec{Argv: []string{"grep", "{wo", "rd}"}, Parameters: word}, "argv[1]", "does not close"},
		{"stray closing brace", Spec{Argv: []string{"grep", "a}", "{word}"}, Parameters: word}, "argv[1]", "write }} for a literal"},
		{"not a placeholder", Spec{Argv: []string{"awk", "{print $1}", "{word}"}, Parameters: word}, "argv[1]", "{{ and }}"},
		{"program chosen by the model", Spec{Argv: []string{"{word}"}, Parameters: word}, "argv[0]", "written in the config"},
		{"missing program", Spec{Argv: []string{"no-such-program-anywhere", "{word}"}, Parameters: word}, "argv[0]", "not on PATH"},
		{"program path that is not there", Spec{Argv: []string{"/nonexistent/bin/tool", "{word}"}, Parameters: word}, "argv[0]", "cannot be run"},
		{"bad type", Spec{Argv: []string{"grep", "{word}"}, Parameters: map[string]Param{"word": {Type: "text", Description: "w"}}}, "parameters.word.type", `unknown type "text"`},
		{"unused parameter", Spec{Argv: []string{"grep", "x"}, Parameters: word}, "parameters.word", "not used"},
		{"parameter without a description", Spec{Argv: []string{"grep", "{word}"}, Parameters: map[string]Param{"word": {}}}, "parameters.word.description", "describe"},
		{"enum of the wrong type", Spec{Argv: []string{"grep", "{n}"}, Parameters: map[string]Param{"n": {Type: "integer", Description: "n", Enum: []any{"one"}}}}, "parameters.n.enum", "not a value of type integer"},
		{"MCP-style name", Spec{Name: "notes__grep", Argv: []string{"grep"}}, "name", "MCP"},
		{"name with a space", Spec{Name: "grep notes", Argv: []string{"grep"}}, "name", "cannot name a tool"},
		{"no argv", Spec{}, "argv", "needs argv"},
		{"no description", Spec{Description: " ", Argv: []string{"grep"}}, "description", "needs a description"},
		{"relative cwd", Spec{Argv: []string{"grep"}, Cwd: "notes"}, "cwd", "relative"},
		{"cwd that is not there", Spec{Argv: []string{"grep"}, Cwd: "/nonexistent/notes"}, "cwd", "no such file"},
		{"negative timeout", Spec{Argv: []string{"grep"}, Timeout: -1}, "timeout", "seconds"},
		{"exit status out of range", Spec{Argv: []string{"grep"}, SuccessCodes: []int{256}}, "success_codes", "between 0 and 255"},
		{"NUL in the config", Spec{Argv: []string{"grep", "a\x00b"}}, "argv[1]", "NUL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.spec
			if s.Name == "" {
				s.Name = "grep_notes"
			}
			if s.Description == "" {
				s.Description = "Search notes."
			}
			_, err := Compile(s)
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SpecError", err)
			}
			if se.Key != c.key || !strings.Contains(se.Msg, c.message) {
				t.Fatalf("got key %q, %q; want key %q and a message with %q", se.Key, se.Msg, c.key, c.message)
			}
		})
	}
}

func TestTheSchemaListsParametersInTheirOrderOfUse(t *testing.T) {
	c := mustCompile(t, Spec{
		Name: "grep_notes", Description: "Search notes.",
		Argv:  []string{"grep", "--max-count={limit}", "{word}", "{dir}"},
		Stdin: "{word}",
		Parameters: map[string]Param{
			"dir":   str("where", false),
			"word":  str("what", true),
			"limit": {Type: "integer", Description: "how many", Enum: []any{int64(1), int64(10)}},
		},
	})
	s := New(c).Spec().Parameters
	if got := strings.Join(s.PropertyOrder, ","); got != "limit,word,dir" {
		t.Fatalf("order %s", got)
	}
	if got := strings.Join(s.Required, ","); got != "word" {
		t.Fatalf("required %s", got)
	}
	if e := s.Properties["limit"].Enum; len(e) != 2 || e[1] != float64(10) {
		t.Fatalf("enum %v: numbers must compare with JSON arguments (float64)", e)
	}
}
