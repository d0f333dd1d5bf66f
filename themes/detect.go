package themes

import (
	"os"
	"strconv"
	"strings"

	"github.com/muesli/termenv"
	"golang.org/x/term"
)

// Detect returns Dark or Light for the background of the terminal out
// writes to, and remembers it for Get("auto") and Get("high-contrast").
//
// Call it once, before the Bubble Tea program starts (see the package
// comment): it may write a query to the terminal and read the answer from
// it. In order:
//
//   - COLORFGBG ("fg;bg", set by rxvt, Konsole, iTerm2 and others) decides
//     when it names a background colour: it costs no round trip to the
//     terminal and is what the person's terminal says of itself.
//   - NO_COLOR, TERM=dumb, or an out that is not a terminal: Dark, without
//     a query. With NO_COLOR nothing is coloured, so the answer would change
//     nothing and is not worth touching the terminal for.
//   - Otherwise the terminal is asked (OSC 11) through termenv, which gives
//     up quickly on terminals that do not answer; no answer means Dark.
func Detect(out *os.File) string {
	bg := detect(out)
	detected.Store(bg)
	return bg
}

func detect(out *os.File) string {
	if bg, ok := parseCOLORFGBG(os.Getenv("COLORFGBG")); ok {
		return bg
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" || out == nil || !term.IsTerminal(int(out.Fd())) {
		return Dark
	}
	if termenv.NewOutput(out).HasDarkBackground() {
		return Dark
	}
	return Light
}

// parseCOLORFGBG reads the background from COLORFGBG: its last field, an
// ANSI colour number ("15;0", or "15;default;0" in rxvt). Colours 0-6 and 8
// are dark, 7 and 9-15 light (the convention vim and others follow); a
// 256-colour index is judged by its lightness. "default" or garbage says
// nothing.
func parseCOLORFGBG(v string) (string, bool) {
	if !strings.Contains(v, ";") {
		return "", false
	}
	f := strings.Split(v, ";")
	n, err := strconv.Atoi(strings.TrimSpace(f[len(f)-1]))
	if err != nil || n < 0 || n > 255 {
		return "", false
	}
	switch {
	case n <= 6 || n == 8:
		return Dark, true
	case n <= 15:
		return Light, true
	}
	_, _, l := termenv.ConvertToRGB(termenv.ANSI256Color(n)).Hsl()
	if l < 0.5 {
		return Dark, true
	}
	return Light, true
}
