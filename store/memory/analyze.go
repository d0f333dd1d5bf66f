package memory

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// analyzerVersion names the rules below. The index stores it: terms written
// by one version are meaningless to another, so a store opened with a
// different version rebuilds its index from the stored chunk texts (see
// rebuild.go).
const analyzerVersion = 3

// maxTermBytes drops longer runs (base64 blobs, hashes, minified code):
// nobody searches for them and they would bloat the term dictionary. It
// also bounds a compound identifier's whole term.
const maxTermBytes = 64

// analyzer turns text into index terms, identically for documents and
// queries:
//
//   - NFC normalisation, so a precomposed "é" and "e"+accent are one letter;
//   - a word is a run of letters, digits and combining marks in any script;
//     everything else (punctuation, quotes, apostrophes, symbols) separates
//     words, so `"don't"`, (don't) and don't analyse alike;
//   - Han, Hiragana, Katakana, Thai, Lao, Khmer and Myanmar characters are
//     one term each, since those scripts do not separate words with spaces;
//   - lower case (Unicode rules), and Latin letters lose their diacritics
//     ("Café" and "cafe" are one term, "Straße" is "strasse", "Ørsted" is
//     "orsted"); other scripts keep theirs, where a mark can change the
//     letter (Cyrillic "й" is not "и");
//   - identifiers are indexed whole and in parts (see splitCamel and the
//     compound handling in each): "ParseDuration" gives "parseduration",
//     "parse" and "duration"; "max_file_size", "max-file-size" and
//     "max.file.size" give "maxfilesize" besides "max", "file" and "size";
//   - English stop words (the Snowball list) are indexed like any word, so
//     "it's", "The Who" or "not" can be found; a query drops them when it
//     has other words, which rank better (see query);
//   - terms made only of Latin letters are stemmed with the Snowball English
//     stemmer ("Running" and "runs" both become "run"); terms with digits or
//     in other scripts are kept as they are.
//
// It is safe for concurrent use.
type analyzer struct {
	vocabMu sync.Mutex
	dict    *dict
	idle    []*vocab // see takeVocab
	// turn is closed once the batch prepared last has taken all its
	// inputs (see analyses).
	turn chan struct{}
}

func newAnalyzer() *analyzer { return &analyzer{} }

// each calls fn with every term of text, in order, repeats included. parts
// is 1 for a word, which counts towards the text's length, and n >= 2 for
// the whole of an identifier made of n words, which is indexed besides its
// parts (at the same place, so it does not count). The string passed to fn
// may be retained.
func (a *analyzer) each(text string, fn func(term string, parts int)) {
	v := a.takeVocab(0)
	defer a.putVocabs(v)
	words(text, func(word []byte, latin bool, parts int) {
		n := v.number(word, latin)
		fn(v.d.names()[n], parts)
	})
}

// words calls fn with every word of text folded (lower case, Latin
// diacritics removed) but not yet stemmed: see each. latin says whether
// the word is made of Latin letters only, which the stemmer takes. word is
// valid only during the call.
func words(text string, fn func(word []byte, latin bool, parts int)) {
	if !norm.NFC.IsNormalString(text) {
		text = norm.NFC.String(text)
	}
	t := tokenizer{fn: fn}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if !isWordByte(c) {
				t.endCompound()
				i++
				continue
			}
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			if isIdeographic(r) {
				t.endCompound()
				t.emit(utf8.AppendRune(t.word[:0], unicode.ToLower(r)), false, 1)
				i += size
				continue
			}
			if !isWordRune(r) {
				t.endCompound()
				i += size
				continue
			}
		}
		i = t.run(text, i)
		// An identifier continues across one '_', '-' or '.' between two
		// word characters: snake_case, kebab-case, dotted.name.
		if i+1 < len(text) && isJoiner(text[i]) && startsWord(text[i+1:]) {
			t.join()
			i++
			continue
		}
		t.endCompound()
	}
	t.endCompound()
}

// tokenizer is each's state: the run just read and the compound
// identifier (runs joined by '_', '-' or '.') it belongs to. Its buffers
// are fixed, so analysis allocates only the terms it hands out.
type tokenizer struct {
	fn func(word []byte, latin bool, parts int)

	word      [maxTermBytes + 2*utf8.UTFMax]byte // the last run, folded
	wordLen   int
	wordLatin bool // Latin letters only: stemmable
	wordKept  bool // not over maxTermBytes

	whole      [maxTermBytes]byte // the compound's runs so far, concatenated
	wholeLen   int
	wholeOK    bool // every run was kept and fitted
	wholeLatin bool
	parts      int // words in the compound so far
	runs       int
}

// Character classes of a run, for camelCase splitting.
const (
	clsOther = iota // uncased letters, marks
	clsLower
	clsUpper
	clsDigit
)

// run reads the word starting at text[i], emits its terms and returns
// where it ends.
func (t *tokenizer) run(text string, i int) int {
	if t.runs == 0 {
		t.wholeLen, t.wholeOK, t.wholeLatin, t.parts = 0, true, true, 0
	}
	t.runs++
	start := i
	w := t.word[:0]
	latin, tooLong, ascii := true, false, true
	// split: the run has a case change that may separate words (a capital
	// after a small letter or digit, or a small letter after three
	// capitals), so splitCamel must look at it. Most words have none.
	split := false
	prev, upperRun := clsOther, 0
scan:
	for i < len(text) {
		c := text[i]
		if 'a' <= c && c <= 'z' { // most of most words: copied at once
			j := i + 1
			for j < len(text) && 'a' <= text[j] && text[j] <= 'z' {
				j++
			}
			split = split || upperRun >= 3
			upperRun, prev = 0, clsLower
			switch {
			case tooLong:
			case j-i <= maxTermBytes-len(w):
				w = append(w, text[i:j]...)
			default:
				tooLong = true
			}
			i = j
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case 'A' <= c && c <= 'Z':
				split = split || prev == clsLower || prev == clsDigit
				upperRun, prev = upperRun+1, clsUpper
				c += 'a' - 'A'
			case '0' <= c && c <= '9':
				latin = false
				upperRun, prev = 0, clsDigit
			default:
				break scan
			}
			i++
			if len(w) < maxTermBytes {
				w = append(w, c)
			} else {
				tooLong = true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if isIdeographic(r) || !isWordRune(r) {
			break
		}
		i += size
		ascii = false
		switch cls := classOf(r); cls {
		case clsLower:
			split = split || upperRun >= 3
			upperRun, prev = 0, cls
		case clsUpper:
			split = split || prev == clsLower || prev == clsDigit
			upperRun, prev = upperRun+1, cls
		default:
			upperRun, prev = 0, cls
		}
		if !tooLong {
			var isLatin bool
			w, isLatin = appendFolded(w, r)
			latin = latin && isLatin
			tooLong = len(w) > maxTermBytes
		}
	}
	t.wordLen, t.wordLatin, t.wordKept = len(w), latin, !tooLong
	if tooLong {
		return i
	}
	n := 1
	if split {
		n = t.splitCamel(text[start:i], ascii)
	}
	t.emit(w, latin, n)
	t.parts += n
	return i
}

func classOf(r rune) int {
	switch {
	case unicode.IsUpper(r):
		return clsUpper
	case unicode.IsLower(r):
		return clsLower
	case unicode.IsDigit(r):
		return clsDigit
	}
	return clsOther
}

// splitCamel emits the parts of a camelCase or PascalCase run, raw as it is
// in the text, and returns how many there are (1: it is one word after
// all). A part starts at a capital that follows a small letter or digit
// ("parse|Duration", "Base64|Encode") and at the last capital of three or
// more followed by a small letter ("HTTP|Server", "XML|Http|Request"), but
// not before a plural s ("URLs", "IDs"). One-letter parts ("get|X",
// "i|Phone") stay in the whole but are not terms of their own. A run that
// would split into four or more parts averaging under four bytes is taken
// for a random string (base64, a key) and kept whole.
func (t *tokenizer) splitCamel(raw string, ascii bool) int {
	var cls [maxTermBytes + 1]uint8
	var at [maxTermBytes + 1]int // byte offsets of the runes in raw
	n := 0
	if ascii { // then len(raw) <= maxTermBytes: the run was kept
		for i := 0; i < len(raw); i++ {
			c := raw[i]
			switch {
			case 'a' <= c && c <= 'z':
				cls[n] = clsLower
			case 'A' <= c && c <= 'Z':
				cls[n] = clsUpper
			default:
				cls[n] = clsDigit
			}
			at[n] = i
			n++
		}
	} else {
		for i, r := range raw {
			if n == maxTermBytes {
				return 1 // marks dropped by folding made it fit: too odd to split
			}
			cls[n], at[n] = uint8(classOf(r)), i
			n++
		}
	}
	at[n] = len(raw)
	var cuts [maxTermBytes + 1]int // rune indexes where parts start
	nc := 1
	for i := 1; i < n; i++ {
		switch {
		case cls[i] == clsUpper && (cls[i-1] == clsLower || cls[i-1] == clsDigit):
			cuts[nc] = i
			nc++
		case cls[i] == clsLower && i >= 3 && cls[i-1] == clsUpper && cls[i-2] == clsUpper && cls[i-3] == clsUpper:
			if raw[at[i]] == 's' && (i+1 == n || cls[i+1] != clsLower) {
				continue // plural: URLs
			}
			cuts[nc] = i - 1
			nc++
		}
	}
	if nc == 1 || (nc >= 4 && len(raw) < 4*nc) {
		return 1
	}
	cuts[nc] = n
	var buf [maxTermBytes + 2*utf8.UTFMax]byte
	for p := 0; p < nc; p++ {
		from, to := cuts[p], cuts[p+1]
		if to-from < 2 {
			continue
		}
		b, latin := buf[:0], true
		if ascii { // the folded word is the run lower-cased, byte for byte
			b = t.word[at[from]:at[to]]
			for _, c := range b {
				latin = latin && 'a' <= c && c <= 'z'
			}
		} else {
			for _, r := range raw[at[from]:at[to]] {
				var isLatin bool
				b, isLatin = appendFolded(b, r)
				latin = latin && isLatin
			}
		}
		t.emit(b, latin, 1)
	}
	return nc
}

// join adds the run just read to the compound, which goes on.
func (t *tokenizer) join() {
	w := t.word[:t.wordLen]
	if !t.wordKept || t.wholeLen+len(w) > len(t.whole) {
		t.wholeOK = false
		return
	}
	t.wholeLen += copy(t.whole[t.wholeLen:], w)
	t.wholeLatin = t.wholeLatin && t.wordLatin
	if len(w) == 1 && hasLetter(w) {
		// A one-letter run is mostly a receiver or loop variable (r.URL,
		// t.Fatal, s.an.terms): its whole would only bloat the index.
		t.wholeOK = false
	}
}

// endCompound ends the compound after its last run and emits its whole
// when it has several runs (a single run's whole was emitted with its
// parts), none of one letter, and is not a number ("3.14").
func (t *tokenizer) endCompound() {
	if t.runs > 1 {
		t.join()
		if whole := t.whole[:t.wholeLen]; t.wholeOK && hasLetter(whole) {
			t.emit(whole, t.wholeLatin, t.parts)
		}
	}
	t.runs = 0
}

func hasLetter(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return true
		}
	}
	return false
}

func (t *tokenizer) emit(word []byte, latin bool, parts int) {
	if len(word) > 0 {
		t.fn(word, latin, parts)
	}
}

// query is a query's distinct terms, each with its weight (wholeWeight).
type query struct {
	terms []queryTerm
	// stopOnly: the query is only stop words. Each of them is then
	// required, since any one alone matches nearly every chunk.
	stopOnly bool
}

type queryTerm struct {
	text   string
	weight float64
	stop   bool
}

// query analyses a search. Stop words are left out when the query has
// other words (they match nearly everything and only blur the ranking) and
// kept when it has nothing else, so a search for "it's" or "The Who" still
// finds them.
func (a *analyzer) query(text string) query {
	var all []queryTerm
	index := map[string]int{}
	content := 0
	a.each(text, func(t string, parts int) {
		if i, ok := index[t]; ok {
			all[i].weight = max(all[i].weight, wholeWeight(parts))
			return
		}
		index[t] = len(all)
		stop := english.IsStopWord(t)
		if !stop {
			content++
		}
		all = append(all, queryTerm{text: t, weight: wholeWeight(parts), stop: stop})
	})
	if content == len(all) {
		return query{terms: all}
	}
	if content == 0 {
		return query{terms: all, stopOnly: true}
	}
	out := make([]queryTerm, 0, content)
	for _, t := range all {
		if !t.stop {
			out = append(out, t)
		}
	}
	return query{terms: out}
}

// wholeWeight is a query term's weight: 1 for a word, twice its parts
// together for an identifier's whole term, so that a chunk holding the
// identifier once ranks above a chunk (up to about twice as long) that
// uses its words apart, however often.
func wholeWeight(parts int) float64 {
	if parts <= 1 {
		return 1
	}
	return 2 * float64(parts)
}

// appendFolded appends r lower-cased and, for a Latin letter, without its
// diacritics; a combining mark after a Latin letter is dropped. latin
// reports whether r is (or, for such a mark, belongs to) a Latin letter:
// what the stemmer accepts.
func appendFolded(dst []byte, r rune) (_ []byte, latin bool) {
	r = unicode.ToLower(r)
	switch {
	case r < utf8.RuneSelf:
		return append(dst, byte(r)), 'a' <= r && r <= 'z'
	case unicode.IsMark(r):
		if endsLatin(dst) {
			return dst, true
		}
		return utf8.AppendRune(dst, r), false
	}
	if f := latinFolds()[r]; f != "" {
		return append(dst, f...), true
	}
	return utf8.AppendRune(dst, r), unicode.Is(unicode.Latin, r)
}

// latinFolds maps the Latin letters with diacritics (Latin-1, Extended-A
// and -B, Extended Additional) to their lower-case base letters: the
// canonical decomposition without its combining marks, and by hand the
// letters Unicode does not decompose (ø, ł, đ, ß, æ, ...).
var latinFolds = sync.OnceValue(func() map[rune]string {
	m := map[rune]string{}
	for _, rg := range [][2]rune{{0xC0, 0x24F}, {0x1E00, 0x1EFF}} {
		for r := rg[0]; r <= rg[1]; r++ {
			if !unicode.Is(unicode.Latin, r) {
				continue
			}
			var base []rune
			for _, d := range norm.NFD.String(string(r)) {
				if !unicode.Is(unicode.Mn, d) {
					base = append(base, unicode.ToLower(d))
				}
			}
			if s := string(base); len(base) > 0 && s != string(r) && s != string(unicode.ToLower(r)) {
				m[unicode.ToLower(r)] = s
			}
		}
	}
	for from, to := range map[string]string{
		"øǿ": "o", "đð": "d", "ħ": "h", "ł": "l", "ŀ": "l", "ŧ": "t", "ı": "i",
		"ß": "ss", "æǣǽ": "ae", "œ": "oe", "þ": "th", "ƒ": "f",
	} {
		for _, r := range from {
			m[r] = to
		}
	}
	return m
})

// endsLatin reports whether b, folded text, ends with a Latin letter.
func endsLatin(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if c := b[len(b)-1]; c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z'
	}
	r, _ := utf8.DecodeLastRune(b)
	return unicode.Is(unicode.Latin, r)
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func isJoiner(c byte) bool { return c == '_' || c == '-' || c == '.' }

// startsWord reports whether s starts with a character that can begin a
// run (not an ideograph, which stands alone).
func startsWord(s string) bool {
	if s[0] < utf8.RuneSelf {
		return isWordByte(s[0])
	}
	r, _ := utf8.DecodeRuneInString(s)
	return !isIdeographic(r) && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// isIdeographic reports characters of scripts written without spaces
// between words.
func isIdeographic(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}
