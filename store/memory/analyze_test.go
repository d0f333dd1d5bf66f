package memory

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func allTerms(text string) []string {
	var out []string
	newAnalyzer().each(text, func(t string, _ int) { out = append(out, t) })
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
		{"don't won't", []string{"don", "t", "won", "t"}},                                             // apostrophes separate
		{"v3.2.1 HTTP/2 x86_64", []string{"v3", "2", "1", "v321", "http", "2", "x86", "64", "x8664"}}, // identifiers also whole
		{"pi is 3.14", []string{"pi", "is", "3", "14"}},                                               // a number is not an identifier
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
		if got := queryTexts(a.query(q)); !slices.Equal(got, want) {
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
	got := queryTexts(newAnalyzer().query("Run running RUNS run"))
	if !slices.Equal(got, []string{"run"}) {
		t.Errorf("terms = %q, want [run]", got)
	}
}

func queryTexts(q query) []string {
	var out []string
	for _, t := range q.terms {
		out = append(out, t.text)
	}
	return out
}

// termSet is the distinct terms of texts, analysed.
func termSet(texts ...string) map[string]bool {
	set := map[string]bool{}
	for _, text := range texts {
		for _, t := range allTerms(text) {
			set[t] = true
		}
	}
	return set
}

func TestIdentifiersIndexedWholeAndInParts(t *testing.T) {
	cases := []struct {
		in     string
		parts  string   // the words the identifier is made of
		wholes []string // its whole terms: the identifier, and camelCase runs within a compound
	}{
		{"parseDuration", "parse duration", []string{"parseduration"}},
		{"ParseDuration", "parse duration", []string{"parseduration"}},
		{"HTTPServer", "http server", []string{"httpserver"}},
		{"XMLHttpRequest", "xml http request", []string{"xmlhttprequest"}},
		{"getHTTPResponse", "get http response", []string{"gethttpresponse"}},
		{"Base64Encode", "base64 encode", []string{"base64encode"}},
		{"GetIDs", "get ids", []string{"getids"}},
		{"getX", "get", []string{"getx"}}, // one-letter parts stay in the whole only
		{"max_file_size", "max file size", []string{"maxfilesize"}},
		{"MAX_FILE_SIZE", "max file size", []string{"maxfilesize"}},
		{"max-file-size", "max file size", []string{"maxfilesize"}},
		{"config.max.size", "config max size", []string{"configmaxsize"}},
		{"os.ReadFile", "os read file", []string{"readfile", "osreadfile"}},
		{"time.ParseDuration", "time parse duration", []string{"parseduration", "timeparseduration"}},
		{"x86_64", "x86 64", []string{"x8664"}},
		{"well-known", "well known", []string{"wellknown"}},
		// One word after all.
		{"URLs", "urls", nil},
		{"IPv4", "ipv4", nil},
		{"NASA", "nasa", nil},
		{"Hello", "hello", nil},
		{"aGVsbG8gV29ybGQ", "agvsbg8gv29ybgq", nil}, // random mixed case (base64) is not split
		// Not joined: a joiner needs a word character on both sides.
		{"end. Next", "end next", nil},
		{"foo - bar", "foo bar", nil},
		{"--verbose", "verbose", nil},
		{"3.14", "3 14", nil}, // a number
		// A one-letter run: a receiver or variable, no whole.
		{"r.URL.Path", "r url path", nil},
		{"t.Fatal", "t fatal", nil},
		{"x_axis", "x axis", nil},
		{"s.parseDuration", "s parse duration", []string{"parseduration"}},
	}
	a := newAnalyzer()
	for _, c := range cases {
		want := termSet(c.parts)
		for _, w := range c.wholes {
			want[allTerms(w)[0]] = true
		}
		if got := termSet(c.in); !maps.Equal(got, want) {
			t.Errorf("terms of %q = %v, want %v", c.in, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		// The length counts the words, not the whole terms stacked on them.
		if _, dl := a.frequencies(c.in); dl != len(allTerms(c.parts)) {
			t.Errorf("length of %q = %d, want %d (its words)", c.in, dl, len(allTerms(c.parts)))
		}
	}
}

func TestOverlongIdentifiers(t *testing.T) {
	// A run over maxTermBytes is dropped, parts and all (minified code, blobs).
	long := strings.Repeat("abcDef", 12)
	if got := allTerms(long + " kept"); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("terms of an over-long run = %q, want only [kept]", got)
	}
	// A compound of short runs longer than maxTermBytes keeps its parts and
	// loses only its whole term.
	parts := strings.Repeat("segment_", 9) + "end"
	got := termSet(parts)
	if !maps.Equal(got, termSet("segment end")) {
		t.Errorf("terms of a long compound = %v, want its parts only", slices.Sorted(maps.Keys(got)))
	}
}

func TestQueryWeighsWholeIdentifierTwiceItsParts(t *testing.T) {
	q := newAnalyzer().query("time.ParseDuration")
	weights := map[string]float64{}
	for _, qt := range q.terms {
		weights[qt.text] = qt.weight
	}
	pd, tpd := allTerms("parseduration")[0], allTerms("timeparseduration")[0]
	if weights[pd] != 4 || weights[tpd] != 6 || weights[allTerms("time")[0]] != 1 || weights[allTerms("parse")[0]] != 1 || len(weights) != 5 {
		t.Errorf("query weights = %v, want the words 1, %s 4 and %s 6", weights, pd, tpd)
	}
	if q.stopOnly {
		t.Error("an identifier query taken for stop words")
	}
	if q := newAnalyzer().query("The Who"); !q.stopOnly || len(q.terms) != 2 {
		t.Errorf("query of stop words = %+v, want both terms, all required", q)
	}
}

func TestLatinDiacriticsFolded(t *testing.T) {
	same := [][2]string{
		{"naïve café", "naive cafe"},
		{"crème brûlée", "creme brulee"},
		{"Ångström", "angstrom"},
		{"Łódź", "lodz"},
		{"Ørsted", "orsted"},
		{"Straße", "strasse"},
		{"Æsir œuvre", "aesir oeuvre"},
		{"Việt Nam", "viet nam"}, // two marks on one letter (Latin Extended Additional)
		{"İstanbul", "istanbul"},
		{"e\u0301te\u0301", "ete"},     // combining marks, composed by NFC then folded
		{"q\u0303", "q"},               // a combining mark with no precomposed form
		{"ÉtéCafé", "EteCafe"},         // folded parts of an identifier
		{"naïve_café", "naive_cafe"},   // and of a compound
		{"SMÖRGÅSBORD", "smorgasbord"}, // upper case
		{"über", "uber"},
	}
	for _, p := range same {
		a, b := allTerms(p[0]), allTerms(p[1])
		if len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("terms(%q) = %q, terms(%q) = %q: want equal and non-empty", p[0], a, p[1], b)
		}
	}
	// Other scripts keep their marks: they can make another letter.
	differ := [][2]string{
		{"йод", "иод"},       // Cyrillic short i is its own letter
		{"ёлка", "елка"},     // Cyrillic yo
		{"हिन्दी", "हनद"},    // Devanagari vowel signs and virama are marks
		{"Ελλάδα", "Ελλαδα"}, // Greek is not Latin: its accents stay
	}
	for _, p := range differ {
		if a, b := allTerms(p[0]), allTerms(p[1]); slices.Equal(a, b) {
			t.Errorf("terms(%q) = terms(%q) = %q: want them kept apart", p[0], p[1], a)
		}
	}
	if got := allTerms("हिन्दी"); !slices.Equal(got, []string{"हिन्दी"}) {
		t.Errorf("terms of a Devanagari word = %q, want it unchanged", got)
	}
}
