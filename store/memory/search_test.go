package memory

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fillerWords are common, non-stop words that make chunks look like text.
var fillerWords = strings.Fields("report meeting project budget schedule review team office plan update")

// proseWithStopWords returns a sentence heavy in stop words, as English is.
func proseWithStopWords(i int) string {
	return fmt.Sprintf("The %s of the %s and the %s is to be done in a week, and it is for the %s of us.",
		fillerWords[i%10], fillerWords[(i+3)%10], fillerWords[(i+5)%10], fillerWords[(i+7)%10])
}

func TestStopWordOnlyQuery(t *testing.T) {
	s, _ := openTest(t, Options{})
	for i := range 30 {
		mustAdd(t, s, Input{Content: proseWithStopWords(i), Source: fmt.Sprint("prose", i)})
	}
	who := mustAdd(t, s, Input{Content: "The Who played their loudest concert.", Source: "band"}).ID
	hamlet := mustAdd(t, s, Input{Content: "To be, or not to be, that is the question.", Source: "hamlet"}).ID
	zebra := mustAdd(t, s, Input{Content: "A zebra " + strings.Repeat("grazed on the plain and ", 6), Source: "zebra"}).ID

	// Every stop word of the query is required: "who" is only in one text.
	if ids := searchIDs(t, s, "the who", 10); !slices.Equal(ids, []string{who}) {
		t.Errorf(`"the who" found %v, want only the band's text`, ids)
	}
	if ids := searchIDs(t, s, "to be or not to be", 10); !slices.Equal(ids, []string{hamlet}) {
		t.Errorf(`"to be or not to be" found %v, want only Hamlet`, ids)
	}
	// Among the texts holding them all, BM25 ranks: more occurrences, in a
	// shorter text, first.
	whoAgain := mustAdd(t, s, Input{Content: "Who, who, who are the Who?", Source: "who again"}).ID
	if ids := searchIDs(t, s, "the who", 10); !slices.Equal(ids, []string{whoAgain, who}) {
		t.Errorf(`"the who" ranked %v, want %s then %s`, ids, whoAgain, who)
	}
	if err := s.Delete(ctx, whoAgain); err != nil {
		t.Fatal(err)
	}
	// A stop word no text holds: nothing, although the others are everywhere.
	if ids := searchIDs(t, s, "the yourselves", 10); len(ids) != 0 {
		t.Errorf(`"the yourselves" found %v, want nothing`, ids)
	}

	// The trial's query: every prose text holds all five words, so they are
	// found, but with low scores, because these words say little about a
	// text. A rare word's match scores far higher.
	common := mustSearch(t, s, "the and of a to", 50)
	if len(common) != 30 {
		t.Errorf(`"the and of a to" found %d texts, want the 30 that hold all five words`, len(common))
	}
	rare := mustSearch(t, s, "zebra", 5)
	if len(rare) != 1 || rare[0].DocID != zebra {
		t.Fatalf(`"zebra": %v`, rare)
	}
	for _, h := range common {
		if h.Score >= rare[0].Score/4 {
			t.Errorf(`"the and of a to" scored %.3f, a rare word's single mention %.3f: stop words must score far lower`, h.Score, rare[0].Score)
			break
		}
	}
	if the := mustSearch(t, s, "the", 1); len(the) != 1 || the[0].Score >= rare[0].Score/4 {
		t.Errorf(`"the" scored %v, want far below the rare word's %.3f`, the, rare[0].Score)
	}

	// With another word, stop words are dropped and the rare word decides,
	// although the zebra text is long and holds "the" six times.
	if hits := mustSearch(t, s, "the zebra and the plain", 3); len(hits) == 0 || hits[0].DocID != zebra {
		t.Errorf("a query with a rare word did not rank its text first: %v", hits)
	}
}

// TestScoresComparableAcrossQueries: a query's best score reflects how
// much its terms say about the chunks, so a term in nearly every chunk
// cannot score like a rare one.
func TestScoresComparableAcrossQueries(t *testing.T) {
	s, _ := openTest(t, Options{})
	for i := range 40 {
		text := fmt.Sprintf("project update number %d for the %s team.", i, fillerWords[i%10])
		if i == 7 {
			text += " Mentions the okapi once."
		}
		mustAdd(t, s, Input{Content: text})
	}
	best := func(q string) float64 {
		hits := mustSearch(t, s, q, 1)
		if len(hits) == 0 {
			t.Fatalf("%q found nothing", q)
		}
		return hits[0].Score
	}
	everywhere, rare := best("project"), best("okapi")
	if everywhere >= rare/2 {
		t.Errorf("a word in every chunk scored %.3f, a word in one chunk %.3f: want it well below", everywhere, rare)
	}
	if rare < 0.3 || rare >= 1 {
		t.Errorf("a single mention of a rare word scored %.3f, want a clear match below 1", rare)
	}
}

func TestSearchFoldsAccentsBothWays(t *testing.T) {
	s, _ := openTest(t, Options{})
	accented := mustAdd(t, s, Input{Content: "A naïve approach at the café near the Øresund."}).ID
	plain := mustAdd(t, s, Input{Content: "The creme brulee was served in Sao Paulo."}).ID
	russian := mustAdd(t, s, Input{Content: "Йод и иод: разные написания."}).ID
	for q, want := range map[string]string{
		"naive cafe": accented, "NAIVE": accented, "oresund": accented, "naïve café": accented,
		"crème brûlée": plain, "São Paulo": plain, "creme": plain,
	} {
		if ids := searchIDs(t, s, q, 5); len(ids) == 0 || ids[0] != want {
			t.Errorf("query %q found %v, want %s first", q, ids, want)
		}
	}
	// Cyrillic keeps its marks: "йод" is found as written.
	if ids := searchIDs(t, s, "йод", 5); !slices.Equal(ids, []string{russian}) {
		t.Errorf(`"йод" found %v`, ids)
	}
}

func TestSearchFindsIdentifierParts(t *testing.T) {
	s, _ := openTest(t, Options{})
	docs := []struct {
		text    string
		queries []string // each must find the text first
	}{
		{"d, err := time.ParseDuration(flagValue)", []string{"parse duration", "ParseDuration", "parseduration", "time.ParseDuration", "duration parse"}},
		{"func newHTTPServer(addr string) *Server", []string{"http server", "HTTPServer", "newHTTPServer", "newhttpserver"}},
		{"limits.max_file_size = 1 << 20", []string{"max file size", "max_file_size", "MaxFileSize", "maxFileSize", "max-file-size"}},
		{"--request-timeout-seconds 30", []string{"request timeout seconds", "request-timeout-seconds", "requestTimeoutSeconds"}},
		{"data = json.loads(payload)", []string{"json loads", "json.loads", "loads"}},
		{"XMLHttpRequest is the old way", []string{"xml http request", "XMLHttpRequest", "HttpRequest"}},
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = mustAdd(t, s, Input{Content: d.text}).ID
	}
	// Prose that shares the words, so the identifier has to win on merit.
	mustAdd(t, s, Input{Content: "We parse the file, check its size, and time the server request with a timeout; the duration is logged as json."})
	for i, d := range docs {
		for _, q := range d.queries {
			if got := searchIDs(t, s, q, 3); len(got) == 0 || got[0] != ids[i] {
				t.Errorf("query %q: hits %v, want %q first", q, got, d.text)
			}
		}
	}
}

// TestExactIdentifierRanksFirst: a query for an identifier ranks the
// chunks holding it above chunks that use its words more often, apart.
func TestExactIdentifierRanksFirst(t *testing.T) {
	s, _ := openTest(t, Options{})
	prose := mustAdd(t, s, Input{Content: "Parse the duration, parse it again: a duration is hard to parse. Duration!"}).ID
	reversed := mustAdd(t, s, Input{Content: "DurationParse is another function entirely."}).ID
	exact := mustAdd(t, s, Input{Content: "The handler reads the timeout flag from the command line, calls ParseDuration once on its value, " +
		"rejects negative values with a clear message, and stores the result in the server's configuration " +
		"so that every request started later uses it."}).ID
	snake := mustAdd(t, s, Input{Content: "parse_duration(value) in the Python port"}).ID
	for i := range 20 {
		mustAdd(t, s, Input{Content: fmt.Sprintf("note %d about something else: %s", i, proseWithStopWords(i))})
	}
	got := searchIDs(t, s, "ParseDuration", 4)
	if len(got) < 4 || !slices.Contains(got[:2], exact) || !slices.Contains(got[:2], snake) {
		t.Fatalf("ParseDuration ranked %v; want the exact identifier (%s) and its snake_case form (%s) first", got, exact, snake)
	}
	if i := slices.Index(got, prose); i >= 0 && i < 2 {
		t.Errorf("prose that repeats the words ranked %d", i+1)
	}
	if i := slices.Index(got, reversed); i >= 0 && i < 2 {
		t.Errorf("DurationParse ranked %d", i+1)
	}
	// And the words alone still find the identifier, among the prose.
	if got := searchIDs(t, s, "parse duration", 30); !slices.Contains(got, exact) || !slices.Contains(got, prose) {
		t.Errorf("parse duration: %v", got)
	}
}
