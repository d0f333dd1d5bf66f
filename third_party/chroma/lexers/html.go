package lexers

import (
	"github.com/alecthomas/chroma/v2"
)

// HTML lexer, built on first use (patched: upstream parses its XML at init).
var HTML = chroma.NewLazyLexer("HTML", func() chroma.Lexer { return chroma.MustNewXMLLexer(embedded, "embedded/html.xml") })
