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
)

// Reach is where a tool may read without asking: the working directory the
// process had when the tool was built and the configured allowed
// directories, all resolved after symbolic links. Anything else needs the
// person's confirmation (see tools.ConfirmationRule), so a prompt injection
// cannot make a model read around the machine unseen.
//
// The root directory never counts as a working directory: a process started
// from / (a service, a cron job) would otherwise reach every file. Listing
// "/" in allowed_dirs is the way to say so.
type Reach struct {
	dirs       []string
	configured bool // allowed directories were given
	// err is set when a configured directory is unusable: every call then
	// fails saying so (a reach that silently became "anything" or
	// "nothing" would be worse).
	err error
}

// NewReach returns the working directory plus allowed (~ expanded). A
// directory that does not exist is reported by Err, not dropped.
func NewReach(allowed []string) *Reach {
	r := &Reach{configured: len(allowed) > 0}
	if wd, err := os.Getwd(); err == nil {
		if real, err := filepath.EvalSymlinks(wd); err == nil && real != string(filepath.Separator) {
			r.dirs = append(r.dirs, real)
		}
	}
	for _, d := range allowed {
		abs, err := filepath.Abs(expandHome(d))
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

// Err says why the configured directories are unusable (nil when they are
// fine).
func (r *Reach) Err() error { return r.err }

// Dirs returns the directories reached without asking.
func (r *Reach) Dirs() []string { return append([]string(nil), r.dirs...) }

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

// Within reports whether p is dir or beneath it, on path boundaries (so
// /etc does not contain /etcetera). Both must be clean absolute paths.
func Within(dir, p string) bool {
	if dir == string(filepath.Separator) {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// ConfirmationFor says whether acting on p needs confirmation because it is
// outside the reach, and the reason to show: verb names the act ("reads",
// "indexes"). A path that does not exist is judged by the part of it that
// does, so that probing for files outside the reach asks too.
func (r *Reach) ConfirmationFor(p, verb string) (bool, string) {
	if r.err != nil || strings.TrimSpace(p) == "" {
		return false, "" // the call fails with the reason; nothing to ask
	}
	if r.Contains(Resolve(p)) {
		return false, ""
	}
	where := "outside the working directory"
	if r.configured {
		where += " and the allowed directories"
	}
	return true, fmt.Sprintf("%s %s, %s", verb, shown(p), where)
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
