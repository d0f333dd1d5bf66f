package themes

import (
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromastyles "github.com/alecthomas/chroma/v2/styles"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	glamourstyles "github.com/charmbracelet/glamour/styles"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Code blocks are highlighted with chroma styles registered under these
// names. glamour's own way (a Chroma section in the StyleConfig) registers
// the first palette it sees under one fixed name for the whole process, so
// after switching from dark to light, code would keep the dark colours; a
// named style per theme does not have that problem.
const (
	chromaDark              = "jarvis-dark"
	chromaLight             = "jarvis-light"
	chromaHighContrastDark  = "jarvis-high-contrast-dark"
	chromaHighContrastLight = "jarvis-high-contrast-light"
)

// registerChromaStyles puts the styles in chroma's registry. Every
// renderer's options come from MarkdownOptions, which calls it first, so
// no renderer reads the registry before they are there; a command that
// draws no markdown never builds them.
var registerChromaStyles = sync.OnceFunc(func() {
	chromastyles.Register(chromaStyle(chromaDark, glamourstyles.DarkStyleConfig.CodeBlock.Chroma))
	chromastyles.Register(chromaStyle(chromaLight, glamourstyles.LightStyleConfig.CodeBlock.Chroma))
	chromastyles.Register(chromaStyle(chromaHighContrastDark, hcDarkChroma))
	chromastyles.Register(chromaStyle(chromaHighContrastLight, hcLightChroma))
})

// MarkdownOptions returns the glamour options that render markdown in
// theme t at width cells (0 means no wrapping), in the colour profile of
// lipgloss's default renderer, so the transcript and the chrome share one
// profile: NO_COLOR gives plain text, and lipgloss.SetColorProfile fixes
// both for tests. Create one renderer per (theme, width) and keep it.
func MarkdownOptions(t Theme, width int) []glamour.TermRendererOption {
	registerChromaStyles()
	profile := lipgloss.ColorProfile()
	cfg := t.Markdown
	if profile == termenv.ANSI256 || profile == termenv.ANSI {
		cfg = quantize(cfg, profile)
	}
	if profile == termenv.Ascii {
		// Chroma writes colour codes whatever the profile; without a
		// theme glamour prints the code plain.
		cfg.CodeBlock.Theme = ""
	}
	return []glamour.TermRendererOption{
		glamour.WithStyles(cfg),
		glamour.WithWordWrap(max(width, 0)),
		glamour.WithColorProfile(profile),
		glamour.WithChromaFormatter(chromaFormatter(profile)),
	}
}

// NewMarkdownRenderer returns a glamour renderer for theme t at width.
func NewMarkdownRenderer(t Theme, width int) (*glamour.TermRenderer, error) {
	return glamour.NewTermRenderer(MarkdownOptions(t, width)...)
}

// chromaFormatter names the chroma formatter for a colour profile: the
// default (terminal256) would send 256-colour codes to a 16-colour
// terminal and round true colours.
func chromaFormatter(p termenv.Profile) string {
	switch p {
	case termenv.TrueColor:
		return "terminal16m"
	case termenv.ANSI:
		return "terminal16"
	}
	return "terminal256"
}

// transcript adapts a glamour style to messages in a transcript: no margin
// and no blank line before and after the document (the transcript spaces
// its items itself), body text and headings in the palette's colours, code
// blocks highlighted with the named chroma style.
func transcript(c ansi.StyleConfig, p Palette, chromaName string) ansi.StyleConfig {
	c.Document.Margin = uintPtr(0)
	c.Document.BlockPrefix, c.Document.BlockSuffix = "", ""
	c.Document.Color = color(p.Text)
	c.Heading.Color = color(p.Accent)
	c.CodeBlock.Chroma = nil
	c.CodeBlock.Theme = chromaName
	return c
}

func darkMarkdown() ansi.StyleConfig {
	return transcript(glamourstyles.DarkStyleConfig, darkPalette, chromaDark)
}

func lightMarkdown() ansi.StyleConfig {
	return transcript(glamourstyles.LightStyleConfig, lightPalette, chromaLight)
}

// highContrast overrides every colour glamour's base style sets, so no
// low-contrast grey survives: text in the palette's text colours, inline
// code without a background, the first heading as a solid block.
func highContrast(c ansi.StyleConfig, p Palette, chromaName string, code, link, image string) ansi.StyleConfig {
	c = transcript(c, p, chromaName)
	c.H1.Color, c.H1.BackgroundColor = color(p.HeaderFg), color(p.HeaderBg)
	c.H6.Color = color(p.Muted)
	c.HorizontalRule.Color = color(p.Text)
	c.Link.Color = &link
	c.LinkText.Color = color(p.Text)
	c.Image.Color = &image
	c.ImageText.Color = color(p.Muted)
	c.Code.Color, c.Code.BackgroundColor = &code, nil
	c.CodeBlock.Color = color(p.Text)
	return c
}

func hcDarkMarkdown() ansi.StyleConfig {
	return highContrast(glamourstyles.DarkStyleConfig, hcDarkPalette, chromaHighContrastDark, "#FFFF00", "#00FFFF", "#FF80FF")
}

func hcLightMarkdown() ansi.StyleConfig {
	return highContrast(glamourstyles.LightStyleConfig, hcLightPalette, chromaHighContrastLight, "#A00000", "#0000C0", "#8B008B")
}

// Syntax colours of the high-contrast themes.
var (
	hcDarkChroma = &ansi.Chroma{
		Text:                fg("#FFFFFF"),
		Error:               ansi.StylePrimitive{Color: strPtr("#FFFFFF"), BackgroundColor: strPtr("#A00000")},
		Comment:             italic("#C0C0C0"),
		CommentPreproc:      fg("#FFB000"),
		Keyword:             bold("#00FFFF"),
		KeywordReserved:     bold("#00FFFF"),
		KeywordNamespace:    bold("#00FFFF"),
		KeywordType:         fg("#87FFFF"),
		Operator:            fg("#FFFFFF"),
		Punctuation:         fg("#FFFFFF"),
		Name:                fg("#FFFFFF"),
		NameBuiltin:         fg("#FF87FF"),
		NameTag:             fg("#00FFFF"),
		NameAttribute:       fg("#FFFF87"),
		NameClass:           bold("#FFFF00"),
		NameConstant:        fg("#FF87FF"),
		NameDecorator:       fg("#FFFF00"),
		NameException:       bold("#FF8080"),
		NameFunction:        fg("#00FF00"),
		NameOther:           fg("#FFFFFF"),
		Literal:             fg("#FF87FF"),
		LiteralNumber:       fg("#FF87FF"),
		LiteralDate:         fg("#FF87FF"),
		LiteralString:       fg("#87FF87"),
		LiteralStringEscape: bold("#FFFF00"),
		GenericDeleted:      fg("#FF8080"),
		GenericEmph:         ansi.StylePrimitive{Italic: boolPtr(true)},
		GenericInserted:     fg("#00FF00"),
		GenericStrong:       ansi.StylePrimitive{Bold: boolPtr(true)},
		GenericSubheading:   fg("#C0C0C0"),
	}
	hcLightChroma = &ansi.Chroma{
		Text:                fg("#000000"),
		Error:               ansi.StylePrimitive{Color: strPtr("#FFFFFF"), BackgroundColor: strPtr("#B00000")},
		Comment:             italic("#404040"),
		CommentPreproc:      fg("#6B4100"),
		Keyword:             bold("#0000C0"),
		KeywordReserved:     bold("#0000C0"),
		KeywordNamespace:    bold("#0000C0"),
		KeywordType:         fg("#005F87"),
		Operator:            fg("#000000"),
		Punctuation:         fg("#000000"),
		Name:                fg("#000000"),
		NameBuiltin:         fg("#8B008B"),
		NameTag:             fg("#0000C0"),
		NameAttribute:       fg("#5F3F00"),
		NameClass:           bold("#000000"),
		NameConstant:        fg("#8B008B"),
		NameDecorator:       fg("#5F3F00"),
		NameException:       bold("#B00000"),
		NameFunction:        fg("#005F00"),
		NameOther:           fg("#000000"),
		Literal:             fg("#8B008B"),
		LiteralNumber:       fg("#8B008B"),
		LiteralDate:         fg("#8B008B"),
		LiteralString:       fg("#A00000"),
		LiteralStringEscape: bold("#5F00AF"),
		GenericDeleted:      fg("#B00000"),
		GenericEmph:         ansi.StylePrimitive{Italic: boolPtr(true)},
		GenericInserted:     fg("#005F00"),
		GenericStrong:       ansi.StylePrimitive{Bold: boolPtr(true)},
		GenericSubheading:   fg("#404040"),
	}
)

// chromaStyle turns a glamour Chroma section into a chroma style, as
// glamour itself does for its single registered style.
func chromaStyle(name string, c *ansi.Chroma) *chroma.Style {
	entry := func(p ansi.StylePrimitive) string {
		var s []byte
		add := func(part string) {
			if len(s) > 0 {
				s = append(s, ' ')
			}
			s = append(s, part...)
		}
		if p.Color != nil {
			add(*p.Color)
		}
		if p.BackgroundColor != nil {
			add("bg:" + *p.BackgroundColor)
		}
		if p.Italic != nil && *p.Italic {
			add("italic")
		}
		if p.Bold != nil && *p.Bold {
			add("bold")
		}
		if p.Underline != nil && *p.Underline {
			add("underline")
		}
		return string(s)
	}
	entries := chroma.StyleEntries{}
	set := func(t chroma.TokenType, p ansi.StylePrimitive) {
		if e := entry(p); e != "" {
			entries[t] = e
		}
	}
	set(chroma.Text, c.Text)
	set(chroma.Error, c.Error)
	set(chroma.Comment, c.Comment)
	set(chroma.CommentPreproc, c.CommentPreproc)
	set(chroma.Keyword, c.Keyword)
	set(chroma.KeywordReserved, c.KeywordReserved)
	set(chroma.KeywordNamespace, c.KeywordNamespace)
	set(chroma.KeywordType, c.KeywordType)
	set(chroma.Operator, c.Operator)
	set(chroma.Punctuation, c.Punctuation)
	set(chroma.Name, c.Name)
	set(chroma.NameBuiltin, c.NameBuiltin)
	set(chroma.NameTag, c.NameTag)
	set(chroma.NameAttribute, c.NameAttribute)
	set(chroma.NameClass, c.NameClass)
	set(chroma.NameConstant, c.NameConstant)
	set(chroma.NameDecorator, c.NameDecorator)
	set(chroma.NameException, c.NameException)
	set(chroma.NameFunction, c.NameFunction)
	set(chroma.NameOther, c.NameOther)
	set(chroma.Literal, c.Literal)
	set(chroma.LiteralNumber, c.LiteralNumber)
	set(chroma.LiteralDate, c.LiteralDate)
	set(chroma.LiteralString, c.LiteralString)
	set(chroma.LiteralStringEscape, c.LiteralStringEscape)
	set(chroma.GenericDeleted, c.GenericDeleted)
	set(chroma.GenericEmph, c.GenericEmph)
	set(chroma.GenericInserted, c.GenericInserted)
	set(chroma.GenericStrong, c.GenericStrong)
	set(chroma.GenericSubheading, c.GenericSubheading)
	set(chroma.Background, c.Background)
	return chroma.MustNewStyle(name, entries)
}

func fg(c string) ansi.StylePrimitive { return ansi.StylePrimitive{Color: strPtr(c)} }
func bold(c string) ansi.StylePrimitive {
	return ansi.StylePrimitive{Color: strPtr(c), Bold: boolPtr(true)}
}
func italic(c string) ansi.StylePrimitive {
	return ansi.StylePrimitive{Color: strPtr(c), Italic: boolPtr(true)}
}

func color(c lipgloss.Color) *string { return strPtr(string(c)) }
func strPtr(s string) *string        { return &s }
func boolPtr(b bool) *bool           { return &b }
func uintPtr(u uint) *uint           { return &u }

// quantize converts every hex colour of a style to the profile's palette
// once, here. Left as hex, termenv converts a colour again for every styled
// span it writes, with colour-space arithmetic: rendering a 20,000-token
// answer in a 256-colour terminal spent half its time doing that.
func quantize(c ansi.StyleConfig, p termenv.Profile) ansi.StyleConfig {
	cache := map[string]string{}
	convert := func(s *string) *string {
		if s == nil || !strings.HasPrefix(*s, "#") {
			return s
		}
		if out, ok := cache[*s]; ok {
			return &out
		}
		out := *s
		switch col := p.Color(*s).(type) {
		case termenv.ANSI256Color:
			out = strconv.Itoa(int(col))
		case termenv.ANSIColor:
			out = strconv.Itoa(int(col))
		}
		cache[*s] = out
		return &out
	}
	quantizeValue(reflect.ValueOf(&c).Elem(), convert)
	return c
}

// quantizeValue walks a style struct and rewrites its colour fields
// (named Color or BackgroundColor, of type *string) with convert.
func quantizeValue(v reflect.Value, convert func(*string) *string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() && v.Elem().Kind() == reflect.Struct {
			// Copy before changing: style configs share pointers with
			// glamour's package-level defaults.
			cp := reflect.New(v.Elem().Type())
			cp.Elem().Set(v.Elem())
			quantizeValue(cp.Elem(), convert)
			v.Set(cp)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			f, sf := v.Field(i), t.Field(i)
			if !sf.IsExported() {
				continue
			}
			if (sf.Name == "Color" || sf.Name == "BackgroundColor") && f.Type() == reflect.TypeOf((*string)(nil)) {
				f.Set(reflect.ValueOf(convert(f.Interface().(*string))))
				continue
			}
			quantizeValue(f, convert)
		}
	}
}
