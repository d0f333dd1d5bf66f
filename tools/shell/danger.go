package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Some commands are refused whoever approves them: their only use from a
// model is to wreck the machine, and a tired "yes" must not be enough.
// The command is parsed as the shell will read it (mvdan.cc/sh), not
// matched with patterns, so quoting, line breaks, `sudo`, `env` or a
// nested `sh -c '…'` do not hide it:
//
//   - deleting / or the home directory (or a top-level system directory)
//     recursively: rm -r, find … -delete, chmod/chown -R on them;
//   - a fork bomb: a function that starts itself in a pipe or the
//     background;
//   - raw writes to a block device (a redirection to /dev/sda, dd of=…,
//     shred, wipefs, blkdiscard) and making a file system (mkfs);
//   - a download run by a shell or an interpreter: curl … | sh,
//     sh -c "$(curl …)", bash <(wget …), eval "$(curl …)".
//
// What cannot be parsed is not refused here (the shell will likely fail on
// it too); the dialog says it could not be checked.

// danger returns why command is refused ("" when it is not) and, when it
// cannot be parsed, the parser's complaint.
func danger(command string) (why, unparsed string) {
	return dangerDepth(command, 0)
}

// maxNesting bounds how deep `sh -c` strings are parsed.
const maxNesting = 4

func dangerDepth(command string, depth int) (why, unparsed string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return "", err.Error()
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.FuncDecl:
			why = forkBomb(x)
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				why = pipedDownload(x)
			}
		case *syntax.Redirect:
			if x.Op == syntax.RdrOut || x.Op == syntax.AppOut || x.Op == syntax.RdrClob || x.Op == syntax.RdrAll || x.Op == syntax.AppAll || x.Op == syntax.RdrInOut {
				if t, ok := wordText(x.Word); ok && blockDevice(t) {
					why = "writes straight to the block device " + t + ", which destroys what is on it"
				}
			}
		case *syntax.CallExpr:
			why = dangerousCall(x, depth)
		}
		return why == ""
	})
	return why, ""
}

// wrappers run the command that follows them; their own options come
// first (env's VAR=value too).
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nice": true, "nohup": true, "time": true, "command": true,
	"exec": true, "builtin": true, "timeout": true, "ionice": true, "chrt": true, "setsid": true, "stdbuf": true, "xargs": true,
}

// argv returns a call's arguments as text (ok false for one that is not
// known before it runs), after the wrappers.
func argv(c *syntax.CallExpr) []arg {
	var out []arg
	for _, w := range c.Args {
		t, ok := wordText(w)
		out = append(out, arg{text: t, known: ok, word: w})
	}
	for len(out) > 0 && out[0].known && wrappers[path.Base(out[0].text)] {
		name := path.Base(out[0].text)
		out = out[1:]
		for len(out) > 0 && out[0].known && (strings.HasPrefix(out[0].text, "-") || name == "env" && strings.Contains(out[0].text, "=")) {
			out = out[1:]
		}
		if name == "timeout" && len(out) > 0 {
			out = out[1:] // the duration
		}
	}
	return out
}

type arg struct {
	text  string
	known bool
	word  *syntax.Word
}

// dangerousCall checks one simple command.
func dangerousCall(c *syntax.CallExpr, depth int) string {
	args := argv(c)
	if len(args) == 0 || !args[0].known {
		return ""
	}
	name := path.Base(args[0].text)
	rest := args[1:]
	switch {
	case name == "rm":
		if hasFlag(rest, "r", "R", "--recursive") {
			if t := wipedTarget(rest); t != "" {
				return "deletes " + t + " and everything under it"
			}
		}
	case name == "find":
		if t := findRoot(rest); t != "" && hasArg(rest, "-delete") {
			return "deletes every file under " + t
		}
	case name == "chmod" || name == "chown" || name == "chgrp":
		if hasFlag(rest, "R", "", "--recursive") {
			if t := wipedTarget(rest); t != "" {
				return "changes the " + map[bool]string{true: "permissions", false: "owner"}[name == "chmod"] + " of everything under " + t + ", which breaks the system"
			}
		}
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs" || name == "mkswap" || name == "wipefs" || name == "blkdiscard":
		return "formats or wipes a disk (" + name + ")"
	case name == "dd":
		for _, a := range rest {
			if a.known && strings.HasPrefix(a.text, "of=") && blockDevice(strings.TrimPrefix(a.text, "of=")) {
				return "writes straight to the block device " + strings.TrimPrefix(a.text, "of=") + ", which destroys what is on it"
			}
		}
	case name == "shred":
		for _, a := range rest {
			if a.known && blockDevice(a.text) {
				return "overwrites the block device " + a.text
			}
		}
	case interpreter(name) || name == "eval" || name == "source" || name == ".":
		for _, a := range rest {
			if downloads(a.word) {
				return "runs a script downloaded from the network, unseen (" + name + " with curl or wget inside)"
			}
		}
		if why := nested(name, rest, depth); why != "" {
			return why
		}
	}
	return ""
}

// nested parses the script a shell is given with -c (or eval's words).
func nested(name string, rest []arg, depth int) string {
	if depth >= maxNesting {
		return ""
	}
	var script string
	switch {
	case name == "eval":
		var parts []string
		for _, a := range rest {
			if !a.known {
				return ""
			}
			parts = append(parts, a.text)
		}
		script = strings.Join(parts, " ")
	case shells[name]:
		for i, a := range rest {
			if a.known && strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.Contains(a.text, "c") && i+1 < len(rest) && rest[i+1].known {
				script = rest[i+1].text
				break
			}
		}
	}
	if script == "" {
		return ""
	}
	why, _ := dangerDepth(script, depth+1)
	return why
}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "fish": true, "ash": true, "busybox": true}

// interpreter reports whether name runs a script it is given.
func interpreter(name string) bool {
	if shells[name] {
		return true
	}
	for _, p := range []string{"python", "perl", "ruby", "node", "php", "lua"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// pipedDownload checks a pipe: a download feeding a shell or an
// interpreter.
func pipedDownload(b *syntax.BinaryCmd) string {
	var cmds []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if p, ok := s.Cmd.(*syntax.BinaryCmd); ok && (p.Op == syntax.Pipe || p.Op == syntax.PipeAll) {
			flatten(p.X)
			flatten(p.Y)
			return
		}
		cmds = append(cmds, s)
	}
	flatten(b.X)
	flatten(b.Y)
	fetched := false
	for _, s := range cmds {
		c, ok := s.Cmd.(*syntax.CallExpr)
		if !ok {
			continue
		}
		args := argv(c)
		if len(args) == 0 || !args[0].known {
			continue
		}
		name := path.Base(args[0].text)
		if fetched && interpreter(name) {
			return "pipes a download into " + name + ", which runs whatever the server sends"
		}
		if downloader(name) {
			fetched = true
		}
	}
	return ""
}

func downloader(name string) bool {
	switch name {
	case "curl", "wget", "fetch", "aria2c", "http", "https", "xh":
		return true
	}
	return false
}

// downloads reports whether a word runs a download: $(curl …), <(wget …).
func downloads(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			if args := argv(c); len(args) > 0 && args[0].known && downloader(path.Base(args[0].text)) {
				found = true
			}
		}
		return !found
	})
	return found
}

// forkBomb reports a function that starts itself in a pipe or in the
// background: each call doubles the processes.
func forkBomb(f *syntax.FuncDecl) string {
	if f.Name == nil || f.Body == nil {
		return ""
	}
	name := f.Name.Value
	selfCalls, spreads := 0, false
	syntax.Walk(f.Body, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			if args := argv(x); len(args) > 0 && args[0].known && args[0].text == name {
				selfCalls++
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				spreads = true
			}
		case *syntax.Stmt:
			if x.Background {
				spreads = true
			}
		}
		return true
	})
	if selfCalls > 0 && spreads {
		return "is a fork bomb: the function " + name + " starts copies of itself until the machine cannot start a process"
	}
	return ""
}

// hasFlag reports a short flag (in any cluster: -rf) or a long one.
func hasFlag(args []arg, short1, short2, long string) bool {
	for _, a := range args {
		if !a.known {
			continue
		}
		if a.text == "--" {
			return false
		}
		if a.text == long {
			return true
		}
		if strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") {
			if short1 != "" && strings.Contains(a.text, short1) || short2 != "" && strings.Contains(a.text, short2) {
				return true
			}
		}
	}
	return false
}

func hasArg(args []arg, s string) bool {
	for _, a := range args {
		if a.known && a.text == s {
			return true
		}
	}
	return false
}

// wipedTarget returns the first operand that is /, the home directory
// or a top-level system directory ("" when none is).
func wipedTarget(args []arg) string {
	ended := false
	for _, a := range args {
		if !a.known {
			continue
		}
		if !ended && a.text == "--" {
			ended = true
			continue
		}
		if !ended && strings.HasPrefix(a.text, "-") {
			continue
		}
		if vital(a.text) {
			return a.text
		}
	}
	return ""
}

// findRoot returns find's starting point when it is a vital directory.
func findRoot(args []arg) string {
	for _, a := range args {
		if !a.known || strings.HasPrefix(a.text, "-") {
			break
		}
		if vital(a.text) {
			return a.text
		}
	}
	return ""
}

// systemDirs are the top-level directories whose loss breaks the system.
var systemDirs = map[string]bool{
	"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true, "/lib32": true, "/lib64": true,
	"/opt": true, "/proc": true, "/root": true, "/sbin": true, "/srv": true, "/sys": true, "/usr": true, "/var": true,
	"/Users": true, "/System": true, "/Library": true, "/Applications": true,
}

// vital reports whether deleting p recursively wipes the system or the
// home directory: /, /*, ~, ~/, ~/*, $HOME, a top-level system directory.
func vital(p string) bool {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	for {
		q := strings.TrimSuffix(strings.TrimSuffix(p, "/*"), "/.")
		if len(q) > 1 {
			q = strings.TrimSuffix(q, "/")
		}
		if q == p {
			break
		}
		p = q
	}
	return p == "" || p == "/" || p == "~" || systemDirs[p]
}

// blockDevice reports a disk's device file.
func blockDevice(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	name := strings.TrimPrefix(p, "/dev/")
	for _, d := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "dm-", "md", "mapper/", "rdisk", "nbd", "loop"} {
		if strings.HasPrefix(name, d) {
			return true
		}
	}
	return false
}

// wordText is a word's value when it is known before the command runs:
// literal text and quotes, with $HOME (and ${HOME}) standing for the home
// directory as "~". ok is false for anything else (a variable, a command
// substitution).
func wordText(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range w.Parts {
		if !partText(&b, part, false) {
			return "", false
		}
	}
	return b.String(), true
}

func partText(b *strings.Builder, part syntax.WordPart, quoted bool) bool {
	switch x := part.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(x.Value, quoted))
	case *syntax.SglQuoted:
		if x.Dollar {
			return false
		}
		b.WriteString(x.Value)
	case *syntax.DblQuoted:
		for _, p := range x.Parts {
			if !partText(b, p, true) {
				return false
			}
		}
	case *syntax.ParamExp:
		if x.Param != nil && x.Param.Value == "HOME" && x.Exp == nil && x.Repl == nil && x.Slice == nil && x.Index == nil && !x.Length && !x.Excl {
			b.WriteString("~")
			return true
		}
		return false
	default:
		return false
	}
	return true
}

// unescape drops the backslashes the shell drops: every one outside
// quotes, and inside double quotes those before $ ` " \ and a newline.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
