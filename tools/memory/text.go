package memory

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// decodeText returns data as UTF-8 text: as it is when it is UTF-8, else
// converted from Windows-1252 when it plausibly is text in that encoding
// (legacyText). Otherwise it says why the file is skipped.
func decodeText(data []byte) (string, bool, string) {
	if bytes.IndexByte(data, 0) >= 0 {
		return "", false, "binary"
	}
	if utf8.Valid(data) {
		return string(data), false, ""
	}
	if text, ok := legacyText(data); ok {
		return text, true, ""
	}
	return "", false, "not UTF-8 text (binary, or an encoding other than UTF-8 and Latin-1)"
}

// legacyText decodes data as Windows-1252, whose printable characters are a
// superset of ISO-8859-1's, when it plausibly is text in that encoding: no
// control characters but tab, newline, carriage return and form feed, none
// of the five bytes Windows-1252 leaves undefined, mostly ASCII (Western
// European text is), and no valid multi-byte UTF-8 sequence (that would be
// UTF-8 with a few damaged bytes, which converting would garble).
func legacyText(data []byte) (string, bool) {
	high := 0
	for _, b := range data {
		switch {
		case b >= 0x80:
			high++
			switch b {
			case 0x81, 0x8d, 0x8f, 0x90, 0x9d:
				return "", false
			}
		case b == 0x7f, b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f':
			return "", false
		}
	}
	if high*10 > len(data)*3 {
		return "", false
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if n > 1 && r != utf8.RuneError {
			return "", false
		}
		i += n
	}
	out, err := charmap.Windows1252.NewDecoder().Bytes(data)
	if err != nil {
		return "", false
	}
	return string(out), true
}
