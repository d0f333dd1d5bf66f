package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// keyLines maps the path of every key a config file sets to the line it
// is set on: "model", "tool.file_read" (a table: the line of its header),
// "tool.file_read.timeout", "mcp.servers[1].command" (in the second
// [[mcp.servers]] entry, counted from 0). A problem found after decoding
// points at its line through it.
//
// The TOML decoder keeps positions to itself, and other parsers that
// expose them read TOML 1.0 only, where the decoder reads 1.1 (inline
// tables over several lines), so the file is scanned here. It has already
// been decoded, so it is valid TOML: the scanner only needs to find keys
// and step over values, and it stops quietly at anything it does not
// expect, leaving the keys after that point without a line.
type keyLines map[string]int

// near returns the line of path, else of the nearest enclosing table or
// entry that has one (0: none).
func (kl keyLines) near(path string) int {
	for path != "" {
		if l, ok := kl[path]; ok {
			return l
		}
		path = parentPath(path)
	}
	return 0
}

// parentPath drops the last part of a path: "a.b[2]" gives "a.b", "a.b"
// gives "a".
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i > 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// locateKeys scans a TOML document for the lines of its keys.
func locateKeys(text string) (lines keyLines) {
	s := &keyScanner{text: text, lines: keyLines{}, arrays: map[string]int{}}
	lines = s.lines
	for i, c := range text {
		if c == '\n' {
			s.newlines = append(s.newlines, i)
		}
	}
	defer func() {
		// A document the scanner misreads leaves later keys without a
		// line; it never stops the configuration from loading.
		_ = recover()
	}()
	s.document()
	return lines
}

type keyScanner struct {
	text     string
	pos      int
	newlines []int // offsets of '\n', for turning offsets into lines
	lines    keyLines
	// arrays counts the entries of each array of tables so far, by path.
	arrays map[string]int
}

func (s *keyScanner) lineAt(offset int) int {
	return sort.SearchInts(s.newlines, offset) + 1
}

// record notes the line of path, and of its enclosing tables where they
// have none yet.
func (s *keyScanner) record(path string, offset int) {
	line := s.lineAt(offset)
	s.lines[path] = line
	for p := parentPath(path); p != ""; p = parentPath(p) {
		if _, ok := s.lines[p]; ok {
			break
		}
		s.lines[p] = line
	}
}

func (s *keyScanner) eof() bool  { return s.pos >= len(s.text) }
func (s *keyScanner) peek() byte { return s.text[s.pos] }

// blank skips spaces and tabs.
func (s *keyScanner) blank() {
	for !s.eof() && (s.peek() == ' ' || s.peek() == '\t') {
		s.pos++
	}
}

// space skips blanks, newlines and comments.
func (s *keyScanner) space() {
	for !s.eof() {
		switch s.peek() {
		case ' ', '\t', '\r', '\n':
			s.pos++
		case '#':
			for !s.eof() && s.peek() != '\n' {
				s.pos++
			}
		default:
			return
		}
	}
}

func (s *keyScanner) document() {
	table := ""
	for {
		s.space()
		if s.eof() {
			return
		}
		start := s.pos
		if s.peek() == '[' {
			array := strings.HasPrefix(s.text[s.pos:], "[[")
			s.pos++
			if array {
				s.pos++
			}
			parts, ok := s.key()
			if !ok {
				return
			}
			s.blank()
			closing := "]"
			if array {
				closing = "]]"
			}
			if !strings.HasPrefix(s.text[s.pos:], closing) {
				return
			}
			s.pos += len(closing)
			table = s.tablePath(parts, array)
			s.record(table, start)
			continue
		}
		if !s.keyValue(table) {
			return
		}
	}
}

// tablePath resolves a table header's key: a part that names an array of
// tables means its last entry, and an [[array]] header opens a new entry.
func (s *keyScanner) tablePath(parts []string, array bool) string {
	path := ""
	for i, part := range parts {
		path = joinPath(path, part)
		if array && i == len(parts)-1 {
			n := s.arrays[path]
			s.arrays[path] = n + 1
			return fmt.Sprintf("%s[%d]", path, n)
		}
		if n, ok := s.arrays[path]; ok {
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
	}
	return path
}

// keyValue reads "key = value" inside table.
func (s *keyScanner) keyValue(table string) bool {
	start := s.pos
	parts, ok := s.key()
	if !ok {
		return false
	}
	s.blank()
	if s.eof() || s.peek() != '=' {
		return false
	}
	s.pos++
	s.blank()
	path := table
	for _, p := range parts {
		path = joinPath(path, p)
	}
	s.record(path, start)
	return s.value(path)
}

// key reads a possibly dotted key.
func (s *keyScanner) key() ([]string, bool) {
	var parts []string
	for {
		s.blank()
		if s.eof() {
			return nil, false
		}
		var part string
		switch c := s.peek(); {
		case c == '"':
			raw, ok := s.basicString()
			if !ok {
				return nil, false
			}
			part = unquoteBasic(raw)
		case c == '\'':
			raw, ok := s.literalString()
			if !ok {
				return nil, false
			}
			part = raw[1 : len(raw)-1]
		default:
			begin := s.pos
			for !s.eof() && bareKeyByte(s.peek()) {
				s.pos++
			}
			if s.pos == begin {
				return nil, false
			}
			part = s.text[begin:s.pos]
		}
		parts = append(parts, part)
		s.blank()
		if s.eof() || s.peek() != '.' {
			return parts, true
		}
		s.pos++
	}
}

func bareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// unquoteBasic turns a quoted key into its name; the escapes Go does not
// share with TOML are left as written.
func unquoteBasic(raw string) string {
	if u, err := strconv.Unquote(raw); err == nil {
		return u
	}
	return raw[1 : len(raw)-1]
}

// value steps over the value of path, noting the keys of inline tables
// and of the inline tables in arrays.
func (s *keyScanner) value(path string) bool {
	if s.eof() {
		return false
	}
	switch s.peek() {
	case '"':
		if strings.HasPrefix(s.text[s.pos:], `"""`) {
			return s.multiline('"')
		}
		_, ok := s.basicString()
		return ok
	case '\'':
		if strings.HasPrefix(s.text[s.pos:], "'''") {
			return s.multiline('\'')
		}
		_, ok := s.literalString()
		return ok
	case '[':
		return s.array(path)
	case '{':
		return s.inlineTable(path)
	}
	// A number, boolean or date: up to what ends a value.
	begin := s.pos
	for !s.eof() && !strings.ContainsRune(",]}#\r\n", rune(s.peek())) {
		s.pos++
	}
	return s.pos > begin
}

func (s *keyScanner) basicString() (string, bool) {
	begin := s.pos
	s.pos++
	for !s.eof() {
		switch s.peek() {
		case '\\':
			s.pos += 2
		case '"':
			s.pos++
			return s.text[begin:s.pos], true
		case '\n':
			return "", false
		default:
			s.pos++
		}
	}
	return "", false
}

func (s *keyScanner) literalString() (string, bool) {
	begin := s.pos
	end := strings.IndexAny(s.text[s.pos+1:], "'\n")
	if end < 0 || s.text[s.pos+1+end] != '\'' {
		return "", false
	}
	s.pos += end + 2
	return s.text[begin:s.pos], true
}

// multiline steps over a """ or ”' string. Its closing delimiter is the
// last three of a run of up to five quotes.
func (s *keyScanner) multiline(q byte) bool {
	s.pos += 3
	for !s.eof() {
		c := s.peek()
		if c == '\\' && q == '"' {
			s.pos += 2
			continue
		}
		if c != q {
			s.pos++
			continue
		}
		run := 0
		for !s.eof() && s.peek() == q {
			run++
			s.pos++
		}
		if run >= 3 {
			return true
		}
	}
	return false
}

func (s *keyScanner) array(path string) bool {
	s.pos++
	for i := 0; ; i++ {
		s.space()
		if s.eof() {
			return false
		}
		if s.peek() == ']' {
			s.pos++
			return true
		}
		elem := fmt.Sprintf("%s[%d]", path, i)
		if s.peek() == '{' {
			s.record(elem, s.pos)
		}
		if !s.value(elem) {
			return false
		}
		s.space()
		if !s.eof() && s.peek() == ',' {
			s.pos++
		}
	}
}

func (s *keyScanner) inlineTable(path string) bool {
	s.pos++
	for {
		s.space()
		if s.eof() {
			return false
		}
		switch s.peek() {
		case '}':
			s.pos++
			return true
		case ',':
			s.pos++
			continue
		}
		if !s.keyValue(path) {
			return false
		}
	}
}
