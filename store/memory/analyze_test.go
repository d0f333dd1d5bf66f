package memory

import (
	"slices"
	"strings"
	"testing"
)

func allTerms(text string) []string {
	var out []string
	newAnalyzer().each(text, nil, func(t string) { out = append(out, t) })
	return out
}

func TestAnalyzerTerms(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Running runners RUN", []string{"run", "runner", "run"}},
		{"The cat sat on the mat", []string{"the", "cat", "sat", "on", "the", "mat"}},    // stop words kept, not stemmed
		{"hello,world...foo!bar?(baz)", []string{"hello", "world", "foo", "bar", "baz"}}, // punctuation separates
		{`"Quoted" 'single' «guillemets» “curly”`, []string{"quot", "singl", "guillemet", "cur"}},
		{"don't won't", []string{"don", "t", "won", "t"}}, // apostrophes separate
		{"v3.2.1 HTTP/2 x86_64", []string{"v3", "2", "1", "http", "2", "x86", "64"}},
		{"   \n\t  ", nil},
		{"...!?;:", nil},
		{strings.Repeat("a", maxTermBytes+1) + " kept", []string{"kept"}}, // over-long runs dropped
	}
	for _, c := range cases {
		if got := allTerms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestQueryTermsDropStopWordsOnlyWithOtherWords(t *testing.T) {
	a := newAnalyzer()
	for q, want := range map[string][]string{
		"The cat sat on the mat": {"cat", "sat", "mat"},
		"it's":                   {"it", "s"},
		"The Who":                {"the", "who"},
		"not":                    {"not"},
		"don't panic":            {"panic"},
	} {
		if got := a.terms(q); !slices.Equal(got, want) {
			t.Errorf("query terms of %q = %q, want %q", q, got, want)
		}
	}
}

func TestScriptsWithoutSpacesAreSplitByCharacter(t *testing.T) {
	if got := allTerms("สวัสดีครับ"); len(got) != 10 {
		t.Errorf("Thai text gave %d terms (%q), want one per character", len(got), got)
	}
}

func TestAnalyzerUnicode(t *testing.T) {
	same := [][2]string{
		{"ÄRGER ÜBER GRÖSSE", "ärger über grösse"}, // case folding beyond ASCII
		{"café", "cafe\u0301"},                     // NFC: precomposed and combining accent agree
		{"ΣΟΦΙΑ", "σοφια"},                         // Greek
		{"Москва", "москва"},                       // Cyrillic
		{"naïve résumé", "NAÏVE RÉSUMÉ"},
	}
	for _, p := range same {
		a, b := allTerms(p[0]), allTerms(p[1])
		if len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("terms(%q) = %q, terms(%q) = %q: want equal and non-empty", p[0], a, p[1], b)
		}
	}
	// Scripts without spaces: one term per character.
	if got := allTerms("東京タワー"); len(got) < 4 || got[0] != "東" || got[1] != "京" {
		t.Errorf("terms of Japanese text = %q, want one per character", got)
	}
}

func TestQueryTermsAreDistinct(t *testing.T) {
	got := newAnalyzer().terms("Run running RUNS run")
	if !slices.Equal(got, []string{"run"}) {
		t.Errorf("terms = %q, want [run]", got)
	}
}
