package safe

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// hostile is what a file_read or http_request result or a model's reply
// can hold: colour, a carriage return that would overwrite what is drawn,
// an OSC 52 sequence that would write the clipboard, a screen clear, a
// window title, an 8-bit CSI.
const hostile = "\x1b[31mred\x1b[0m\rXX\x1b]52;c;Zm9v\x07 \x1b[2J\x1b[H\x1b]0;pwned\x07c1\u009b31m\x1bP1$r\x1b\\end"

// corpus is what the tests split in every way.
var corpus = []string{
	hostile,
	"plain text · ünïcode 日本 🎉",
	"keep\nnewlines\tand tabs",
	"bell\a nul\x00 del\x7f bs\b cr\r",
	"\x1b[2J\x1b[H\x1b]0;title\x07clear",
	"c1\u009b31m csi and \u009d8;;https://x\u009c link",
	"bad \xff\xfe utf8 \xe6\x97 cut",
	"osc ended by ST \x1b]8;;http://example.com\x1b\\link\x1b]8;;\x1b\\",
	"apc \x1b_Gf=100;AAAA\x1b\\ pm \x1b^x\x1b\\ sos \x1bXy\x1b\\ reset \x1bc done",
	"cancelled \x1b[12\x18 sequence",
	"unterminated \x1b]0;title that never ends",
	"\x1b",
	"",
}

// oracle is the definition Text must meet: the terminal parser's printable
// text, without C0 (except newline and tab), DEL and C1 controls.
func oracle(s string) string {
	s = ansi.Strip(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || r == '\t' || !(r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// assertInert fails when s holds anything a terminal would act on rather
// than print.
func assertInert(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("invalid UTF-8 in %q", s)
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f) {
			t.Fatalf("control %U in %q", r, s)
		}
	}
}

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{hostile, "redXX c131mend"},
		{"plain text · ünïcode 日本", "plain text · ünïcode 日本"},
		{"keep\nnewlines\tand tabs", "keep\nnewlines\tand tabs"},
		{"bell\a nul\x00 del\x7f bs\b", "bell nul del bs"},
		{"\x1b[2J\x1b[H\x1b]0;title\x07clear", "clear"},
		{"c1\u009b31m csi", "c131m csi"}, // the 8-bit CSI is dropped; what follows is harmless text
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"bad \xff\xfe run", "bad \uFFFD run"},
		{"osc ended by ST \x1b]8;;http://example.com\x1b\\link\x1b]8;;\x1b\\", "osc ended by ST link"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTextMatchesTheParser(t *testing.T) {
	for _, s := range corpus {
		got := Text(s)
		if want := oracle(s); got != want {
			t.Errorf("Text(%q) = %q, want %q", s, got, want)
		}
		assertInert(t, got)
	}
}

func TestOrdinaryTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("an ordinary line · ünïcode\n", 100)
	if n := testing.AllocsPerRun(100, func() { _ = Text(s) }); n != 0 {
		t.Fatalf("Text allocated %v times for clean text", n)
	}
	var st Stream
	if n := testing.AllocsPerRun(100, func() { _ = st.Text("a token ") }); n != 0 {
		t.Fatalf("Stream.Text allocated %v times for a clean piece", n)
	}
}

// stream feeds pieces to a Stream and joins what it returns.
func stream(pieces ...string) string {
	var st Stream
	var b strings.Builder
	for _, p := range pieces {
		b.WriteString(st.Text(p))
	}
	b.WriteString(st.End())
	return b.String()
}

func TestStreamSplitAnywhereMatchesText(t *testing.T) {
	for _, s := range corpus {
		want := Text(s)
		for i := 0; i <= len(s); i++ {
			if got := stream(s[:i], s[i:]); got != want {
				t.Fatalf("split at %d of %q: %q, want %q", i, s, got, want)
			}
			for j := i; j <= len(s); j++ {
				if got := stream(s[:i], s[i:j], s[j:]); got != want {
					t.Fatalf("split at %d and %d of %q: %q, want %q", i, j, s, got, want)
				}
			}
		}
		bytewise := make([]string, len(s))
		for i := range len(s) {
			bytewise[i] = s[i : i+1]
		}
		if got := stream(bytewise...); got != want {
			t.Fatalf("byte by byte %q: %q, want %q", s, got, want)
		}
	}
}

func TestStreamHoldsBackOnlyWhatIsUnfinished(t *testing.T) {
	var st Stream
	steps := []struct{ in, want string }{
		{"clear\x1b", "clear"},        // ESC could start anything
		{"[2", ""},                    // still inside the CSI
		{"Jnext ", "next "},           // the CSI ended; the text after it shows at once
		{"\x1b]52;c;Zm9", ""},         // a clipboard write, unfinished
		{"v\x07after ", "after "},     // ended by BEL
		{"日本"[:4], "日"},               // half of 本 waits
		{"日本"[4:] + "!", "本!"},        // and is completed
		{"\u009b"[:1], ""},            // half of an 8-bit CSI
		{"\u009b"[1:] + "31m", "31m"}, // the control is dropped whole, never as U+FFFD
	}
	for _, s := range steps {
		if got := st.Text(s.in); got != s.want {
			t.Fatalf("Text(%q) = %q, want %q", s.in, got, s.want)
		}
	}
	if got := st.End(); got != "" {
		t.Fatalf("End = %q, want nothing held", got)
	}
	// End shows an unfinished character as U+FFFD and starts afresh.
	st.Text("x\xe6\x97")
	if got := st.End(); got != "\uFFFD" {
		t.Fatalf("End = %q, want U+FFFD", got)
	}
	if got := st.Text("\x1b"); got != "" {
		t.Fatalf("after End: %q", got)
	}
	st.Reset()
	if got := st.Text("[2Jvisible"); got != "[2Jvisible" {
		t.Fatalf("after Reset the old ESC still counts: %q", got)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, piece := range []string{"answer \x1b", "[2J is ", "\x1b]0;ti", "tle\x07here \xe6\x97", "\xa5\n", "\xe6"} {
		n, err := w.Write([]byte(piece))
		if n != len(piece) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", piece, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "answer  is here 日\n\uFFFD"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	boom := errors.New("disk full")
	if _, err := NewWriter(failingWriter{boom}).Write([]byte("x")); !errors.Is(err, boom) {
		t.Fatalf("error = %v, want the underlying writer's", err)
	}
}

func FuzzStream(f *testing.F) {
	for _, s := range corpus {
		f.Add(s, uint8(len(s)/2), uint8(len(s)/3))
	}
	f.Fuzz(func(t *testing.T, s string, a, b uint8) {
		want := oracle(s)
		if got := Text(s); got != want {
			t.Fatalf("Text(%q) = %q, want %q", s, got, want)
		}
		i, j := min(int(a), len(s)), min(int(b), len(s))
		if i > j {
			i, j = j, i
		}
		got := stream(s[:i], s[i:j], s[j:])
		if got != want {
			t.Fatalf("stream of %q split at %d, %d = %q, want %q", s, i, j, got, want)
		}
		assertInert(t, got)
	})
}

func BenchmarkText(b *testing.B) {
	cleanText := strings.Repeat("An ordinary answer with ünïcode and `code`.\n", 50)
	dirty := strings.Repeat("An answer \x1b[31mwith colour\x1b[0m and a title \x1b]0;x\x07.\n", 50)
	b.Run("clean", func(b *testing.B) {
		b.SetBytes(int64(len(cleanText)))
		for b.Loop() {
			_ = Text(cleanText)
		}
	})
	b.Run("hostile", func(b *testing.B) {
		b.SetBytes(int64(len(dirty)))
		for b.Loop() {
			_ = Text(dirty)
		}
	})
}

// BenchmarkStreamTokens is the per-token cost of a streamed reply.
func BenchmarkStreamTokens(b *testing.B) {
	tokens := strings.Fields(strings.Repeat("a streamed answer of ordinary words, one per token ", 40))
	for i := range tokens {
		tokens[i] += " "
	}
	b.ReportAllocs()
	for b.Loop() {
		var st Stream
		for _, tok := range tokens {
			_ = st.Text(tok)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tokens)), "ns/token")
}
