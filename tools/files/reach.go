package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/jarvis-workbench/jarvis/tools"
)

// Reach is where a file tool may act. With no allowed directories
// configured for the tool, it is the tools' working directory when the
// tool was built (tools.Deps.WorkDir, else the process's), acted on
// without asking; anything else needs the
// person's confirmation (see tools.ConfirmationRule), so a prompt injection
// cannot make a model read around the machine unseen. With allowed
// directories configured, it is exactly those, as the tool spec says: a
// hard limit that no approval, --yes or grant lifts. Directories are
// compared after resolving symbolic links.
//
// The root directory never counts as a working directory: a process started
// from / (a service, a cron job) would otherwise reach every file. Listing
// "/" in allowed_dirs is the way to say so.
type Reach struct {
	dirs []string
	// limited: allowed directories were configured, and are a hard limit.
	limited bool
	// setting names the configuration the directories come from, for
	// refusals: "[tool.file_read] allowed_dirs".
	setting string
	// err is set when a configured directory is unusable: every call then
	// fails saying so (a reach that silently became "anything" or
	// "nothing" would be worse).
	err error
	// wd is the working directory relative paths resolve in ("": the
	// process's).
	wd string
}

// NewReach returns the reach of a tool working in the process's working
// directory (see NewReachIn).
func NewReach(setting string, allowed []string) *Reach { return NewReachIn(setting, allowed, "") }

// NewReachIn returns the reach of a tool whose working directory is wd
// ("": the process's): allowed (~ expanded), named by setting in
// messages, or the working directory when allowed is empty. A directory
// that does not exist is reported by Err, not dropped.
func NewReachIn(setting string, allowed []string, wd string) *Reach {
	r := &Reach{limited: len(allowed) > 0, setting: setting, wd: wd}
	if !r.limited {
		if wd, err := r.WorkDir(); err == nil {
			if real, err := filepath.EvalSymlinks(wd); err == nil && real != string(filepath.Separator) {
				r.dirs = append(r.dirs, real)
			}
		}
		return r
	}
	for _, d := range allowed {
		abs, err := r.abs(d)
		if err != nil {
			r.err = fmt.Errorf("allowed directory %q: %w", d, err)
			return r
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			r.err = fmt.Errorf("allowed directory %q does not exist or cannot be resolved: %w", d, err)
			return r
		}
		r.dirs = append(r.dirs, real)
	}
	return r
}

// WorkDir is the directory the tool works in: where relative paths
// resolve and commands run.
func (r *Reach) WorkDir() (string, error) {
	if r.wd != "" {
		return r.wd, nil
	}
	return os.Getwd()
}

// abs returns p absolute (~ expanded), a relative path taken in the
// working directory.
func (r *Reach) abs(p string) (string, error) { return absIn(r.wd, p) }

// Abs is p absolute (~ expanded), a relative path taken in the working
// directory; p cleaned when it cannot be made absolute.
func (r *Reach) Abs(p string) string { return absOr(r.wd, p) }

// Secrets are the rules of sensitive files, a relative path judged in
// the working directory.
func (r *Reach) Secrets() *Secrets {
	s := NewSecrets()
	s.wd = r.wd
	return s
}

// absIn returns p absolute (~ expanded), a relative path taken in wd
// ("": the process's working directory).
func absIn(wd, p string) (string, error) {
	p = expandHome(p)
	if wd != "" && !filepath.IsAbs(p) {
		return filepath.Join(wd, p), nil
	}
	return filepath.Abs(p)
}

// absOr is absIn, or p cleaned when it cannot be made absolute.
func absOr(wd, p string) string {
	abs, err := absIn(wd, p)
	if err != nil {
		return filepath.Clean(p)
	}
	return abs
}

// Resolve is Resolve of p taken in the working directory.
func (r *Reach) Resolve(p string) string { return Resolve(r.Abs(p)) }

// Err says why the configured directories are unusable (nil when they are
// fine).
func (r *Reach) Err() error { return r.err }

// Dirs returns the directories acted on without asking.
func (r *Reach) Dirs() []string { return append([]string(nil), r.dirs...) }

// Limited reports whether the reach is a hard limit (allowed directories
// are configured).
func (r *Reach) Limited() bool { return r.limited }

// Contains reports whether real, a path without symbolic links, is in the
// reach.
func (r *Reach) Contains(real string) bool {
	for _, dir := range r.dirs {
		if Within(dir, real) {
			return true
		}
	}
	return false
}

// Refuse refuses acting on p when it is past the hard limit of configured
// allowed directories (nil otherwise): no one may approve it, and the
// message says which setting to change. verb names the act ("read").
func (r *Reach) Refuse(p, verb string) *tools.Refusal {
	if !r.limited || r.err != nil || strings.TrimSpace(p) == "" || r.Contains(r.Resolve(p)) {
		return nil
	}
	return r.refusal(p, verb)
}

func (r *Reach) refusal(p, verb string) *tools.Refusal {
	return &tools.Refusal{
		Message: fmt.Sprintf("Access denied: %s is outside the allowed directories (%s). Only the user can change that: "+
			"they may add its directory to %s in the config file.", shown(p), strings.Join(r.dirs, ", "), r.setting),
		By:   tools.ByConfig,
		Rule: "outside " + r.setting + " (" + verb + " " + shown(p) + ")",
	}
}

// Permits reports whether a tool may act on real (resolved) now: inside
// the reach, or outside it without a hard limit when the person approved
// the call (confirmed). Tools check it in Execute, where it counts: a call
// that did not go through the executor's gate, or a link changed since it
// asked, is still refused.
func (r *Reach) Permits(real string, confirmed bool) bool {
	return r.Contains(real) || !r.limited && confirmed
}

// Outside is a tool's failure for a path Permits refused.
func (r *Reach) Outside(p, verb string) tools.Result {
	if r.limited {
		return tools.Fail("%s", r.refusal(p, verb).Message)
	}
	return tools.Fail("Access denied: %s is outside the working directory, and the call was not approved.", shown(p))
}

// ConfirmationFor says whether acting on p needs confirmation because it is
// outside the working directory, and the reason to show: verb names the
// act ("reads", "indexes"). A path that does not exist is judged by the
// part of it that does, so that probing for files outside the reach asks
// too. With a hard limit nothing asks: outside it is refused (Refuse).
func (r *Reach) ConfirmationFor(p, verb string) (bool, string) {
	if r.limited || r.err != nil || strings.TrimSpace(p) == "" {
		return false, "" // refused, or the call fails with the reason
	}
	if r.Contains(r.Resolve(p)) {
		return false, ""
	}
	return true, fmt.Sprintf("%s %s, outside the working directory", verb, shown(p))
}

// DirScope is the grant scope of acting on p: the directory it is in, as
// resolved in the working directory (the directory itself when p is one,
// if asDir). words says what the grant allows, with %s for the directory
// ("reads in %s (not its subfolders)").
func (r *Reach) DirScope(p string, asDir bool, words string) tools.Scope {
	dir := r.Resolve(p)
	if info, err := os.Stat(dir); !asDir || err != nil || !info.IsDir() {
		dir = filepath.Dir(dir)
	}
	return tools.Scope{Kind: tools.ScopeDir, Value: dir, Words: fmt.Sprintf(words, shown(dir))}
}

// Within reports whether p is dir or beneath it, on path boundaries (so
// /etc does not contain /etcetera). Both must be clean absolute paths.
func Within(dir, p string) bool {
	if dir == string(filepath.Separator) {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// Resolve returns p absolute (~ expanded) with every symbolic link
// resolved. When p does not exist, its longest existing parent is resolved
// and the rest appended.
func Resolve(p string) string {
	abs, err := filepath.Abs(expandHome(p))
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for dir := abs; ; {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir || !errors.Is(err, fs.ErrNotExist) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// shown returns a path for a message: as given, or quoted when it holds
// characters a terminal would act on.
func shown(p string) string {
	for _, r := range p {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return strconv.Quote(p)
		}
	}
	return p
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
