package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	memstore "github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/files"
)

// MaxFileSize is the largest file indexed: file_read's limit, since files
// are read through file_read's checks.
const MaxFileSize = files.MaxFileSize

// Each batch of files is committed in one transaction, so a crash loses
// at most the batch in flight. Larger batches index faster; smaller ones
// hold the database for less time, and another jarvis process waiting for
// the file (a chat saving a message) gets it between two batches. So the
// size adapts to take about batchTarget on this machine, between
// minBatchBytes and maxBatchBytes.
const (
	batchTarget   = 150 * time.Millisecond
	minBatchBytes = 16 << 10
	maxBatchBytes = 1 << 20
	firstBatch    = 256 << 10
)

// nextBatchBytes scales the last batch's size to the target duration.
func nextBatchBytes(size int64, took time.Duration) int64 {
	if took <= 0 {
		return maxBatchBytes
	}
	return min(max(int64(float64(size)*float64(batchTarget)/float64(took)), minBatchBytes), maxBatchBytes)
}

// skipDirs are directories never descended into: version control data and
// dependency or cache trees, which are large, generated, and not the
// person's own text.
var skipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".bzr": true, "_darcs": true, ".jj": true, "CVS": true,
	"node_modules": true, "bower_components": true, "vendor": true, ".venv": true, "venv": true,
	"__pycache__": true, ".tox": true, ".nox": true, ".mypy_cache": true, ".pytest_cache": true,
	".ruff_cache": true, ".gradle": true, ".terraform": true, ".cache": true, ".idea": true, ".vscode": true,
}

// binaryExts are extensions of formats that are never text, skipped
// without being opened.
var binaryExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".bmp": true, ".ico": true, ".tiff": true,
	".pdf": true, ".zip": true, ".gz": true, ".tgz": true, ".bz2": true, ".xz": true, ".zst": true, ".7z": true, ".rar": true, ".tar": true,
	".exe": true, ".dll": true, ".so": true, ".dylib": true, ".a": true, ".o": true, ".class": true, ".jar": true, ".pyc": true, ".wasm": true,
	".mp3": true, ".mp4": true, ".wav": true, ".flac": true, ".ogg": true, ".mov": true, ".avi": true, ".mkv": true, ".webm": true,
	".ttf": true, ".otf": true, ".woff": true, ".woff2": true, ".db": true, ".sqlite": true, ".bin": true, ".iso": true, ".dmg": true,
}

// IndexOptions configure IndexPath.
type IndexOptions struct {
	// ChunkSize and ChunkOverlap (words); ChunkSize 0 means the store's.
	ChunkSize    int
	ChunkOverlap int
	// Reader applies file_read's rules (allowed directories); nil means
	// no directory restriction. Sensitive files are skipped either way.
	Reader *files.FileRead
	// Progress, when set, is called after each committed batch and once
	// the tree has been listed.
	Progress func(Progress)
}

// Progress is how far an IndexPath has come.
type Progress struct {
	Files, TotalFiles int
	Bytes, TotalBytes int64
	Chunks            int
}

// Skipped is a file left out and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Report says what IndexPath did.
type Report struct {
	Path string `json:"path"`
	// File is true when Path is a file rather than a directory.
	File      bool      `json:"file"`
	Chunks    int       `json:"chunks"`
	Indexed   []string  `json:"indexed"`
	Unchanged []string  `json:"unchanged"`
	Skipped   []Skipped `json:"skipped"`
	// Removed are files indexed before from under Path that no longer
	// exist; their documents were deleted.
	Removed []string      `json:"removed"`
	Bytes   int64         `json:"bytes"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// candidate is a file that passed the checks that need no reading.
type candidate struct {
	path string
	size int64
}

// NotFoundError means the path to index does not exist.
type NotFoundError struct{ Path string }

func (e *NotFoundError) Error() string { return "Path not found: " + e.Path }

// IndexPath stores a text file, or every text file under a directory, in
// the memory, one document per file with the file's absolute path as its
// source. A file indexed before is replaced when it changed and left alone
// when it did not. Binary files, sensitive files (file_read's rule), files
// over MaxFileSize, and version-control and dependency directories are
// skipped and listed in the report. Files indexed from under a directory
// before that have since been deleted are forgotten. Files are committed in
// batches; on error or cancellation the report covers the batches already
// committed.
func IndexPath(ctx context.Context, s *memstore.Store, path string, opts IndexOptions) (Report, error) {
	start := time.Now()
	rep := Report{Path: path}
	if strings.TrimSpace(path) == "" {
		return rep, errors.New("no path given")
	}
	if opts.ChunkSize > 0 {
		if err := memstore.CheckChunking(opts.ChunkSize, opts.ChunkOverlap); err != nil {
			return rep, err
		}
	}
	root, err := filepath.Abs(expandHome(path))
	if err != nil {
		return rep, &NotFoundError{Path: path}
	}
	// A root given through a symbolic link is walked where it points (the
	// walk itself does not follow links), and sources name the real files.
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	cands, err := listFiles(root, &rep)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return rep, &NotFoundError{Path: path}
		}
		if errors.Is(err, fs.ErrPermission) {
			return rep, fmt.Errorf("permission denied: %s", path)
		}
		return rep, err
	}
	reader := opts.Reader
	if reader == nil {
		if reader, err = files.NewFileReadIn(nil); err != nil {
			return rep, err
		}
	}
	prog := Progress{TotalFiles: len(cands)}
	for _, c := range cands {
		prog.TotalBytes += c.size
	}
	report := func() {
		if opts.Progress != nil {
			opts.Progress(prog)
		}
	}
	report()

	var batch []memstore.Input
	var batchPaths []string
	var pending int64
	limit := int64(firstBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		began := time.Now()
		added, err := s.AddBatch(ctx, batch)
		if err != nil {
			return err
		}
		limit = nextBatchBytes(pending, time.Since(began))
		for i, a := range added {
			if a.Unchanged {
				rep.Unchanged = append(rep.Unchanged, batchPaths[i])
				continue
			}
			rep.Indexed = append(rep.Indexed, batchPaths[i])
			rep.Chunks += a.Chunks
			rep.Bytes += int64(len(batch[i].Content))
		}
		prog.Files += len(batch)
		prog.Bytes += pending
		prog.Chunks = rep.Chunks
		batch, batchPaths, pending = nil, nil, 0
		report()
		return nil
	}
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			rep.Elapsed = time.Since(start)
			return rep, err
		}
		content, reason := readText(ctx, reader, c.path)
		if reason != "" {
			rep.Skipped = append(rep.Skipped, Skipped{Path: c.path, Reason: reason})
			prog.Files++
			prog.Bytes += c.size
			continue
		}
		batch = append(batch, memstore.Input{Content: content, Source: c.path, Replace: true,
			ChunkSize: opts.ChunkSize, ChunkOverlap: opts.ChunkOverlap})
		batchPaths = append(batchPaths, c.path)
		pending += c.size
		if pending >= limit {
			if err := flush(); err != nil {
				rep.Elapsed = time.Since(start)
				return rep, err
			}
		}
	}
	if err = flush(); err == nil && !rep.File {
		err = prune(ctx, s, root, cands, &rep)
	}
	rep.Elapsed = time.Since(start)
	return rep, err
}

// prune forgets the files indexed from under root before that no longer
// exist, so that indexing a tree again mirrors it. A file that still exists
// but is now skipped keeps what was indexed.
func prune(ctx context.Context, s *memstore.Store, root string, cands []candidate, rep *Report) error {
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	sources, err := s.Sources(ctx, prefix)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		seen[c.path] = true
	}
	for _, src := range sources {
		if seen[src] {
			continue
		}
		if _, err := os.Lstat(src); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := s.DeleteSource(ctx, src); err != nil {
			return err
		}
		rep.Removed = append(rep.Removed, src)
	}
	return nil
}

// listFiles lists the candidate files under root (root itself when it is a
// file), recording in rep the ones skipped without reading.
func listFiles(root string, rep *Report) ([]candidate, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		rep.File = true
		if reason := precheck(root, info); reason != "" {
			rep.Skipped = append(rep.Skipped, Skipped{Path: root, Reason: reason})
			return nil, nil
		}
		return []candidate{{path: root, size: info.Size()}}, nil
	}
	var out []candidate
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			rep.Skipped = append(rep.Skipped, Skipped{Path: p, Reason: "cannot be read: " + rootCause(err)})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			switch {
			case skipDirs[d.Name()]:
				return fs.SkipDir // not reported: never the person's own text
			case files.IsSensitive(filepath.Join(p, "x")):
				rep.Skipped = append(rep.Skipped, Skipped{Path: p, Reason: "sensitive directory"})
				return fs.SkipDir
			}
			return nil
		}
		var info fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			info, err = os.Stat(p)
			if err != nil {
				rep.Skipped = append(rep.Skipped, Skipped{Path: p, Reason: "broken symbolic link"})
				return nil
			}
			if info.IsDir() {
				rep.Skipped = append(rep.Skipped, Skipped{Path: p, Reason: "symbolic link to a directory (not followed)"})
				return nil
			}
		} else if info, err = d.Info(); err != nil {
			rep.Skipped = append(rep.Skipped, Skipped{Path: p, Reason: "cannot be read: " + rootCause(err)})
			return nil
		}
		if reason := precheck(p, info); reason != "" {
			rep.Skipped = append(rep.Skipped, Skipped{Path: p, Reason: reason})
			return nil
		}
		out = append(out, candidate{path: p, size: info.Size()})
		return nil
	})
	return out, err
}

// precheck returns why a file is skipped before it is opened, "" when it
// is a candidate.
func precheck(p string, info fs.FileInfo) string {
	switch {
	case !info.Mode().IsRegular():
		return "not a regular file"
	case files.IsSensitive(p):
		return "sensitive file"
	case info.Size() == 0:
		return "empty"
	case info.Size() > MaxFileSize:
		return fmt.Sprintf("too large (%d bytes, max %d)", info.Size(), MaxFileSize)
	case binaryExts[strings.ToLower(filepath.Ext(p))]:
		return "binary"
	}
	return ""
}

// readText reads a candidate through file_read, so that its rules (allowed
// directories after resolving links, sensitive names, size, UTF-8) decide
// what is read. It returns the text or why the file is skipped.
func readText(ctx context.Context, reader *files.FileRead, p string) (string, string) {
	r := reader.Execute(ctx, tools.Args{"path": p})
	if !r.Success {
		if strings.Contains(r.Content, "(binary content)") {
			return "", "binary"
		}
		return "", strings.TrimSuffix(r.Content, ".")
	}
	if strings.TrimSpace(r.Content) == "" {
		return "", "empty"
	}
	return r.Content, ""
}

func rootCause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
