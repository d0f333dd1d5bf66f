// Package benchdata holds the corpora of the memory index benchmarks, so
// that jarvis's own benchmarks and the side-by-side comparison with SQLite
// FTS5 (the separate module in bench/fts5) index the same texts in the
// same transactions.
package benchdata

import (
	"go/build"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// File is one text to index.
type File struct {
	Path string
	Text string
}

// The Go distribution's sources ($GOROOT/src), as code corpora: Std is the
// standard library without tests (about 12,000 chunks of the default size),
// All every .go file, tests and test data included (about 120,000 chunks
// of 128 words).
const (
	Std = "std"
	All = "all"
)

// GoSources returns the .go files of the Go distribution running the
// benchmark, in a stable order: which = Std or All. Files that are empty
// or not UTF-8 text (a few test inputs) are left out, as indexing would
// refuse them.
func GoSources(which string) ([]File, error) {
	root := filepath.Join(build.Default.GOROOT, "src")
	var out []File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if which == Std && (rel == "cmd" || d.Name() == "testdata") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || (which == Std && strings.HasSuffix(p, "_test.go")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !utf8.Valid(b) || strings.ContainsRune(string(b), 0) || strings.TrimSpace(string(b)) == "" {
			return nil
		}
		out = append(out, File{Path: rel, Text: string(b)})
		return nil
	})
	return out, err
}

// BatchBytes is how much text a benchmark commits per transaction: the
// largest batch `jarvis memory index` makes.
const BatchBytes = 1 << 20

// Batches cuts files into consecutive batches of about BatchBytes.
func Batches(files []File) [][]File {
	var out [][]File
	start, size := 0, 0
	for i, f := range files {
		size += len(f.Text)
		if size >= BatchBytes || i == len(files)-1 {
			out = append(out, files[start:i+1])
			start, size = i+1, 0
		}
	}
	return out
}

// Bytes is the total size of files.
func Bytes(files []File) int {
	n := 0
	for _, f := range files {
		n += len(f.Text)
	}
	return n
}

// Queries returns n search queries of one to three words taken from the
// texts (identifiers and words of three letters or more), as people
// search code, the same for every run of the same files and seed.
func Queries(files []File, n int, seed int64) []string {
	rng := rand.New(rand.NewSource(seed))
	out := make([]string, 0, n)
	for len(out) < n {
		f := files[rng.Intn(len(files))].Text
		var q []string
		for range 1 + rng.Intn(3) {
			at := rng.Intn(len(f))
			for _, m := range wordRE.FindAllStringIndex(f[at:min(at+200, len(f))], 2) {
				if start := at + m[0]; start == 0 || !isWordByte(f[start-1]) { // a whole word
					q = append(q, f[start:at+m[1]])
					break
				}
			}
		}
		if len(q) > 0 {
			out = append(out, strings.Join(q, " "))
		}
	}
	return out
}

var wordRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]{2,}\b`)

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
