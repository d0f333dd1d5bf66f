package themes

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	chromastyles "github.com/alecthomas/chroma/v2/styles"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// concrete are the themes Get builds; the other names resolve to them.
var concrete = []string{Dark, Light, HighContrastDark, HighContrastLight}

func TestEveryThemeSetsEveryColourAndStyle(t *testing.T) {
	for _, name := range Names() {
		th, err := Get(name)
		if err != nil {
			t.Fatalf("Get(%q): %v", name, err)
		}
		p := reflect.ValueOf(th.Colors)
		for i := range p.NumField() {
			c := p.Field(i).Interface().(lipgloss.Color)
			if _, err := parseColour(string(c)); err != nil {
				t.Errorf("%s: colour %s = %q: %v", th.Name, p.Type().Field(i).Name, c, err)
			}
		}
		s := reflect.ValueOf(th.Styles)
		for i := range s.NumField() {
			field := s.Type().Field(i).Name
			st := s.Field(i).Interface().(lipgloss.Style)
			_, noFg := st.GetForeground().(lipgloss.NoColor)
			_, noBg := st.GetBackground().(lipgloss.NoColor)
			if noFg && noBg {
				t.Errorf("%s: style %s has no colour", th.Name, field)
			}
		}
		for field, st := range map[string]lipgloss.Style{"Panel": th.Styles.Panel, "PanelFocus": th.Styles.PanelFocus, "Dialog": th.Styles.Dialog, "Input": th.Styles.Input} {
			if _, none := st.GetBorderTopForeground().(lipgloss.NoColor); none || st.GetBorderStyle() == (lipgloss.Border{}) {
				t.Errorf("%s: style %s has no coloured border", th.Name, field)
			}
		}
		md := th.Markdown
		if md.Document.Margin == nil || *md.Document.Margin != 0 || md.Document.BlockPrefix != "" {
			t.Errorf("%s: markdown document keeps a margin or a blank first line", th.Name)
		}
		if md.Document.Color == nil || *md.Document.Color != string(th.Colors.Text) {
			t.Errorf("%s: markdown text colour is not the theme's", th.Name)
		}
		MarkdownOptions(th, 80) // registers the code styles, as before any renderer
		if _, ok := chromastyles.Registry[md.CodeBlock.Theme]; !ok || md.CodeBlock.Chroma != nil {
			t.Errorf("%s: code blocks use %q (registered %v) and Chroma %v", th.Name, md.CodeBlock.Theme, ok, md.CodeBlock.Chroma)
		}
		if th.Background != Dark && th.Background != Light {
			t.Errorf("%s: background %q", th.Name, th.Background)
		}
	}
}

func TestGet(t *testing.T) {
	_, err := Get("solarized")
	if err == nil {
		t.Fatal("an unknown theme was accepted")
	}
	for _, want := range append([]string{`"solarized"`}, Names()...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if th, err := Get("  Light "); err != nil || th.Name != Light {
		t.Errorf("names are not case-insensitive: %v %v", th.Name, err)
	}
	for _, bg := range []string{Light, Dark} {
		detected.Store(bg)
		auto, _ := Get(Auto)
		empty, _ := Get("")
		hc, _ := Get(HighContrast)
		if auto.Name != bg || empty.Name != bg || hc.Name != HighContrast+"-"+bg || hc.Background != bg {
			t.Errorf("detected %s: auto=%s empty=%s high-contrast=%s", bg, auto.Name, empty.Name, hc.Name)
		}
	}
	detected.Store("")
	if Detected() != Dark {
		t.Errorf("Detected before any Detect = %s, want dark", Detected())
	}
	if names := Names(); len(names) != 6 || names[0] != Auto {
		t.Errorf("Names() = %v", names)
	}
}

// Text colours must be readable: 4.5:1 (WCAG AA) for dark and light on a
// typical background of their kind, 7:1 (AAA) for high contrast on pure
// black or white; bars and the selection against their own background.
func TestContrast(t *testing.T) {
	for _, name := range concrete {
		th, _ := Get(name)
		p := th.Colors
		min, bg := 4.5, lipgloss.Color("#1C1C1C")
		if th.Background == Light {
			bg = "#FFFFFF"
		}
		text := map[string]lipgloss.Color{"Text": p.Text, "Muted": p.Muted, "Accent": p.Accent, "User": p.User,
			"Assistant": p.Assistant, "Running": p.Running, "Success": p.Success, "Error": p.Error, "Warning": p.Warning,
			"Denied": p.Denied, "Timeout": p.Timeout, "Cancelled": p.Cancelled, "Cost": p.Cost, "DialogTitle": p.DialogTitle}
		if strings.HasPrefix(name, HighContrast) {
			min, bg = 7, "#000000"
			if th.Background == Light {
				bg = "#FFFFFF"
			}
			text["Faint"], text["Thinking"] = p.Faint, p.Thinking
		}
		for field, c := range text {
			if r := contrast(t, string(c), string(bg)); r < min {
				t.Errorf("%s: %s %s on %s has contrast %.2f, want %.1f", name, field, c, bg, r, min)
			}
		}
		pairs := [][3]string{{"status bar", string(p.StatusBarFg), string(p.StatusBarBg)},
			{"status key", string(p.StatusKey), string(p.StatusBarBg)},
			{"header", string(p.HeaderFg), string(p.HeaderBg)},
			{"selection", string(p.SelectionFg), string(p.SelectionBg)}}
		for _, pr := range pairs {
			if r := contrast(t, pr[1], pr[2]); r < min {
				t.Errorf("%s: %s %s on %s has contrast %.2f, want %.1f", name, pr[0], pr[1], pr[2], r, min)
			}
		}
	}
}

// TestHighContrastMarkdown walks the high-contrast glamour styles and their
// syntax colours: no colour inherited from the base styles may fall below
// 7:1 against the background it is drawn on.
func TestHighContrastMarkdown(t *testing.T) {
	for _, name := range []string{HighContrastDark, HighContrastLight} {
		th, _ := Get(name)
		bg := "#000000"
		if th.Background == Light {
			bg = "#FFFFFF"
		}
		check := func(path string, p ansi.StylePrimitive) {
			if p.Color == nil {
				return
			}
			on := bg
			if p.BackgroundColor != nil {
				on = *p.BackgroundColor
			}
			if r := contrast(t, *p.Color, on); r < 7 {
				t.Errorf("%s: %s colour %s on %s has contrast %.2f", name, path, *p.Color, on, r)
			}
		}
		walkPrimitives(reflect.ValueOf(th.Markdown), "markdown", check)
		chroma := hcDarkChroma
		if th.Background == Light {
			chroma = hcLightChroma
		}
		walkPrimitives(reflect.ValueOf(*chroma), "chroma", check)
	}
}

func walkPrimitives(v reflect.Value, path string, fn func(string, ansi.StylePrimitive)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkPrimitives(v.Elem(), path, fn)
		}
	case reflect.Struct:
		if p, ok := v.Interface().(ansi.StylePrimitive); ok {
			fn(path, p)
			return
		}
		for i := range v.NumField() {
			walkPrimitives(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
		}
	}
}

// contrast is the WCAG contrast ratio of two colours.
func contrast(t *testing.T, a, b string) float64 {
	t.Helper()
	la, lb := luminance(t, a), luminance(t, b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(t *testing.T, c string) float64 {
	t.Helper()
	rgb, err := parseColour(c)
	if err != nil {
		t.Fatal(err)
	}
	lin := func(v float64) float64 {
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(rgb[0]) + 0.7152*lin(rgb[1]) + 0.0722*lin(rgb[2])
}

// parseColour reads "#RRGGBB" or an ANSI colour number into RGB in [0, 1].
func parseColour(c string) ([3]float64, error) {
	if n, err := strconv.Atoi(c); err == nil && n >= 0 && n <= 255 {
		rgb := termenv.ConvertToRGB(termenv.ANSI256Color(n))
		return [3]float64{rgb.R, rgb.G, rgb.B}, nil
	}
	if len(c) != 7 || c[0] != '#' {
		return [3]float64{}, strconv.ErrSyntax
	}
	v, err := strconv.ParseUint(c[1:], 16, 32)
	if err != nil {
		return [3]float64{}, err
	}
	return [3]float64{float64(v>>16) / 255, float64(v>>8&0xff) / 255, float64(v&0xff) / 255}, nil
}
