package memory

import "testing"

func TestDecodeText(t *testing.T) {
	for _, c := range []struct {
		name, in, text, reason string
		converted              bool
	}{
		{"utf-8", "naïve café", "naïve café", "", false},
		{"latin-1", "na\xefve caf\xe9", "naïve café", "", true},
		{"windows-1252 quotes and euro", "\x93quoted\x94 \x80 10", "“quoted” € 10", "", true},
		{"NUL byte", "text\x00more", "", "binary", false},
		{"control bytes", "\x01\x02abc\xe9", "", "not UTF-8 text", false},
		{"byte undefined in windows-1252", "abc \x81 def", "", "not UTF-8 text", false},
		{"mostly high bytes", "\xe9\xe8\xe0\xf9\xe7ab", "", "not UTF-8 text", false},
		{"damaged UTF-8", "caf\xc3\xa9 and \xe9", "", "not UTF-8 text", false},
	} {
		text, converted, reason := decodeText([]byte(c.in))
		if text != c.text || converted != c.converted || (c.reason == "") != (reason == "") || len(reason) < len(c.reason) || reason[:len(c.reason)] != c.reason {
			t.Errorf("%s: got %q %v %q, want %q %v %q", c.name, text, converted, reason, c.text, c.converted, c.reason)
		}
	}
}
