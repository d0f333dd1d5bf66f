package files

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A hard link is the same file under another name: ./notes linked to
// ~/.ssh/id_rsa passes every rule on names. A file with more than one
// link is therefore compared with the sensitive files that can be listed:
// those the rules name in every home directory (under its .config,
// .cache and .local/share too), the system's, and jarvis's own.

// linkScanLimit bounds the files looked at under one sensitive directory.
const linkScanLimit = 2000

// sameAsSensitive returns why a file is refused when same holds for one
// of the sensitive files ("" when it holds for none).
func (s *Secrets) sameAsSensitive(same func(os.FileInfo) bool) string {
	check := func(p string) bool {
		info, err := os.Stat(p)
		return err == nil && info.Mode().IsRegular() && same(info)
	}
	scan := func(dir string) bool {
		n := 0
		found := false
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || found {
				return filepath.SkipDir
			}
			if n++; n > linkScanLimit {
				return filepath.SkipAll
			}
			if d.Type().IsRegular() && check(p) {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
		return found
	}
	for p, what := range s.ownPaths {
		if what == ownJournal && scan(p) || what != ownJournal && check(p) {
			return what
		}
	}
	bases := sensitiveBases()
	for _, r := range compiledRules() {
		if r.globbed() {
			continue
		}
		rel := filepath.Join(r.parts...)
		if r.anchored {
			if strings.HasPrefix(rel, "proc") {
				continue // a process's environ is no regular file to link
			}
			rel = string(filepath.Separator) + rel
			if r.dir && scan(rel) || !r.dir && check(rel) {
				return r.holds
			}
			continue
		}
		for _, base := range bases {
			p := filepath.Join(base, rel)
			if r.dir && scan(p) || !r.dir && check(p) {
				return r.holds
			}
		}
	}
	return ""
}

// globbed reports whether a rule has a wildcard, so it names no one path.
func (r compiledRule) globbed() bool {
	for _, e := range r.elems {
		if e.star || e.glob {
			return true
		}
	}
	return false
}

// sensitiveBases are the directories the unanchored rules are tried in:
// each home directory and where programs keep their configuration, caches
// and data beneath it.
func sensitiveBases() []string {
	homes := map[string]bool{}
	if h, err := os.UserHomeDir(); err == nil {
		homes[h] = true
	}
	homes["/root"] = true
	if entries, err := os.ReadDir("/home"); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				homes[filepath.Join("/home", e.Name())] = true
			}
		}
	}
	var bases []string
	for h := range homes {
		bases = append(bases, h, filepath.Join(h, ".config"), filepath.Join(h, ".cache"), filepath.Join(h, ".local", "share"))
	}
	for _, env := range []string{"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		if d := os.Getenv(env); d != "" {
			bases = append(bases, d)
		}
	}
	return bases
}
