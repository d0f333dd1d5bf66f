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
	"github.com/jarvis-workbench/jarvis/tools/files"
)

// DefaultMaxFileBytes is the largest file indexed unless configured
// otherwise: file_read's limit.
const DefaultMaxFileBytes = files.MaxFileSize

// MaxFileBytesLimit bounds the configurable limit: a file is analysed in
// memory in one piece, and a typo must not let one file fill the machine.
const MaxFileBytesLimit = 256 << 20

// CheckMaxFileBytes validates a per-file limit (0 means the default).
func CheckMaxFileBytes(n int64) error {
	if n < 0 || n > MaxFileBytesLimit {
		return fmt.Errorf("the largest file to index must be between 1 byte and %d bytes (256 MiB), got %d", MaxFileBytesLimit, n)
	}
	return nil
}

// Each batch of files is committed in one transaction, so a crash loses
// at most the batch in flight. Larger batches index faster; smaller ones
// hold the database for less time, and another jarvis process waiting for
// the file (a chat saving a message) gets it between two batches. So the
// size adapts to take about batchTarget on this machine, between
// minBatchBytes and maxBatchBytes, starting small until the first batch
// has measured the machine. A quarter of a second keeps a waiting save
// well under half a second while indexing about as fast as megabyte
// batches (each transaction rewrites the postings of every term it
// touches, so much smaller batches would cost far more in total).
const (
	batchTarget   = 250 * time.Millisecond
	minBatchBytes = 16 << 10
	maxBatchBytes = 1 << 20
	firstBatch    = 64 << 10
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
	// MaxFileBytes skips larger files; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
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
	// Root is Path absolute, after symbolic links: what was walked.
	Root string `json:"root"`
	// File is true when Path is a file rather than a directory.
	File      bool      `json:"file"`
	Chunks    int       `json:"chunks"`
	Indexed   []string  `json:"indexed"`
	Unchanged []string  `json:"unchanged"`
	Skipped   []Skipped `json:"skipped"`
	// Converted are indexed files that were not UTF-8 and were read as
	// Windows-1252 (which covers ISO-8859-1 text).
	Converted []string `json:"converted"`
	// EmbedFailed are indexed files stored without embeddings because the
	// embedding model failed (they are found by keyword search only, and
	// embedded again by the next run), with the error.
	EmbedFailed []Skipped `json:"embed_failed"`
	// Removed are files indexed before from under Path that no longer
	// exist; their documents were deleted.
	Removed []string `json:"removed"`
	// Forgotten are files indexed before that are refused now (sensitive,
	// or reached through a link out of the tree); their documents were
	// deleted, so a memory indexed under older rules is cleaned by
	// indexing again.
	Forgotten []string      `json:"forgotten"`
	Bytes     int64         `json:"bytes"`
	Elapsed   time.Duration `json:"elapsed_ns"`
}

// Refused returns why nothing was indexed when the path itself was
// skipped: a file that is binary or sensitive, a credential directory.
func (r Report) Refused() (string, bool) {
	if len(r.Skipped) == 1 && r.Skipped[0].Path == r.Root && len(r.Indexed)+len(r.Unchanged) == 0 {
		return r.Skipped[0].Reason, true
	}
	return "", false
}

// candidate is a file that passed the checks that need no reading.
type candidate struct {
	path string      // the source: where the file is in the tree
	real string      // what is read: path, or a link's target in the tree
	info fs.FileInfo // what was listed; the file read must be the same
}

// NotFoundError means the path to index does not exist.
type NotFoundError struct{ Path string }

func (e *NotFoundError) Error() string { return "Path not found: " + e.Path }

// IndexPath stores a text file, or every text file under a directory, in
// the memory, one document per file with the file's absolute path as its
// source. A file indexed before is replaced when it changed and left alone
// when it did not. Binary files, sensitive files (files.Secrets), files
// over the size limit, and version-control and dependency directories are
// skipped and listed in the report. The walk never leaves the tree: a
// symbolic link is followed only to a file inside it. Text that is not
// UTF-8 but reads as Windows-1252 (Latin-1) is converted. Files indexed
// from under a directory before that have since been deleted are forgotten.
// Files are committed in batches; on error or cancellation the report
// covers the batches already committed.
//
// IndexPath does not decide whether the path may be indexed at all: the
// memory_index tool asks before indexing outside its reach, and a person
// running `jarvis memory index` decides for themselves.
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
	if err := CheckMaxFileBytes(opts.MaxFileBytes); err != nil {
		return rep, err
	}
	limit := opts.MaxFileBytes
	if limit == 0 {
		limit = DefaultMaxFileBytes
	}
	given, err := filepath.Abs(expandHome(path))
	if err != nil {
		return rep, &NotFoundError{Path: path}
	}
	// A root given through a symbolic link is walked where it points (the
	// walk itself does not follow links), and sources name the real files.
	root := given
	if real, err := filepath.EvalSymlinks(given); err == nil {
		root = real
	}
	rep.Root = root
	w := &walker{root: root, secrets: files.NewSecrets(), limit: limit, rep: &rep}
	cands, err := w.list(given)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return rep, &NotFoundError{Path: path}
		}
		if errors.Is(err, fs.ErrPermission) {
			return rep, fmt.Errorf("permission denied: %s", path)
		}
		return rep, err
	}
	prog := Progress{TotalFiles: len(cands)}
	for _, c := range cands {
		prog.TotalBytes += c.info.Size()
	}
	report := func() {
		if opts.Progress != nil {
			opts.Progress(prog)
		}
	}
	report()

	var batch []memstore.Input
	var batchConverted []bool
	var pending int64
	batchLimit := int64(firstBatch)
	// One batch is written while the next is read and analysed: writing
	// is one goroutine's work and a commit waits for the disk, which the
	// analysis of the next batch, on every CPU, fills.
	type written struct {
		ins       []memstore.Input
		converted []bool
		bytes     int64
		added     []memstore.Added
		took      time.Duration
		err       error
	}
	var inflight chan written
	// settle waits for the batch being written and reports it.
	settle := func() error {
		if inflight == nil {
			return nil
		}
		done := <-inflight
		inflight = nil
		if done.err != nil {
			return done.err
		}
		batchLimit = nextBatchBytes(done.bytes, done.took)
		for i, a := range done.added {
			src := done.ins[i].Source
			if a.Unchanged {
				rep.Unchanged = append(rep.Unchanged, src)
				continue
			}
			rep.Indexed = append(rep.Indexed, src)
			rep.Chunks += a.Chunks
			rep.Bytes += int64(len(done.ins[i].Content))
			if done.converted[i] {
				rep.Converted = append(rep.Converted, src)
			}
			if a.EmbedError != "" {
				rep.EmbedFailed = append(rep.EmbedFailed, Skipped{Path: src, Reason: a.EmbedError})
			}
		}
		prog.Files += len(done.ins)
		prog.Bytes += done.bytes
		prog.Chunks = rep.Chunks
		report()
		return nil
	}
	// flush starts writing the batch, once the one before is written.
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		b, err := s.Prepare(ctx, batch)
		if err != nil {
			return errors.Join(err, settle())
		}
		if err := settle(); err != nil {
			b.Discard()
			return err
		}
		job := written{ins: batch, converted: batchConverted, bytes: pending}
		inflight = make(chan written, 1)
		go func(ch chan<- written) {
			began := time.Now()
			job.added, job.err = b.Write()
			job.took = time.Since(began)
			ch <- job
		}(inflight)
		batch, batchConverted, pending = nil, nil, 0
		return nil
	}
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			if serr := settle(); serr != nil && !errors.Is(serr, err) {
				err = errors.Join(err, serr)
			}
			rep.Elapsed = time.Since(start)
			return rep, err
		}
		content, converted, reason, refused := w.read(c)
		if reason != "" {
			if refused {
				w.refuse(c.path, reason, false)
			} else {
				w.skip(c.path, reason)
			}
			prog.Files++
			prog.Bytes += c.info.Size()
			continue
		}
		batch = append(batch, memstore.Input{Content: content, Source: c.path, Replace: true,
			ChunkSize: opts.ChunkSize, ChunkOverlap: opts.ChunkOverlap})
		batchConverted = append(batchConverted, converted)
		pending += c.info.Size()
		if pending >= batchLimit {
			if err := flush(); err != nil {
				rep.Elapsed = time.Since(start)
				return rep, err
			}
		}
	}
	if err = flush(); err == nil {
		err = settle()
	}
	if err == nil {
		err = w.prune(ctx, s, cands)
	}
	rep.Elapsed = time.Since(start)
	return rep, err
}

// prune forgets the files indexed from under the root before that no
// longer exist, so that indexing a tree again mirrors it, and those that
// are refused now. A file that still exists but is skipped for another
// reason (too large, unreadable for now) keeps what was indexed.
func (w *walker) prune(ctx context.Context, s *memstore.Store, cands []candidate) error {
	var sources []string
	if w.rep.File {
		sources = []string{w.root}
	} else {
		prefix := w.root
		if !strings.HasSuffix(prefix, string(filepath.Separator)) {
			prefix += string(filepath.Separator)
		}
		var err error
		if sources, err = s.Sources(ctx, prefix); err != nil {
			return err
		}
	}
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		seen[c.path] = true
	}
	var gone, refused []string
	for _, src := range sources {
		switch {
		case seen[src]:
		case w.isRefused(src):
			refused = append(refused, src)
		case w.rep.File:
		default:
			if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
				gone = append(gone, src)
			}
		}
	}
	if len(gone)+len(refused) == 0 {
		return nil
	}
	if _, err := s.DeleteSources(ctx, append(gone, refused...)); err != nil {
		return err
	}
	w.rep.Removed = append(w.rep.Removed, gone...)
	w.rep.Forgotten = append(w.rep.Forgotten, refused...)
	return nil
}

// isRefused reports whether p was refused by this walk: a sensitive file,
// a link out of the tree, or a file under a sensitive directory.
func (w *walker) isRefused(p string) bool {
	if w.refused[p] {
		return true
	}
	for _, dir := range w.refusedDirs {
		if files.Within(dir, p) {
			return true
		}
	}
	return false
}

// walker lists and reads the files under one root.
type walker struct {
	root    string
	secrets *files.Secrets
	limit   int64
	rep     *Report
	// refused and refusedDirs are what must not stay in memory from an
	// earlier run: files and directories skipped as sensitive, links out
	// of the tree.
	refused     map[string]bool
	refusedDirs []string
}

func (w *walker) skip(p, reason string) {
	w.rep.Skipped = append(w.rep.Skipped, Skipped{Path: p, Reason: reason})
}

// refuse skips p for a reason that also forgets what an earlier run
// indexed from it.
func (w *walker) refuse(p, reason string, dir bool) {
	w.skip(p, reason)
	if dir {
		w.refusedDirs = append(w.refusedDirs, p)
		return
	}
	if w.refused == nil {
		w.refused = map[string]bool{}
	}
	w.refused[p] = true
}

// list lists the candidate files under the root (the root itself when it
// is a file), recording in the report the ones skipped without reading.
// given is the root as named, before links were resolved: the sensitive
// rules apply to both names.
func (w *walker) list(given string) ([]candidate, error) {
	root := w.root
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		w.rep.File = true
		if why := w.secrets.File(given, root); why != "" {
			w.refuse(root, files.SkipReason(why, false), false)
			return nil, nil
		}
		if reason := w.precheck(root, info); reason != "" {
			w.skip(root, reason)
			return nil, nil
		}
		return []candidate{{path: root, real: root, info: info}}, nil
	}
	if why := w.secrets.Dir(given, root); why != "" {
		w.refuse(root, files.SkipReason(why, true), true)
		return nil, nil
	}
	var out []candidate
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			w.skip(p, "cannot be read: "+rootCause(err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			if skipDirs[d.Name()] {
				return fs.SkipDir // not reported: never the person's own text
			}
			if why := w.secrets.Dir(p); why != "" {
				w.refuse(p, files.SkipReason(why, true), true)
				return fs.SkipDir
			}
			return nil
		}
		c, reason, refused := w.candidate(p, d)
		switch {
		case refused:
			w.refuse(p, reason, false)
			return nil
		case reason != "":
			w.skip(p, reason)
			return nil
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// candidate checks one entry of the walk. A symbolic link is followed only
// to a file inside the tree, and the sensitive rules apply to its target
// as well as to its name. refused is set for the reasons that also forget
// what an earlier run indexed (see walker.refuse).
func (w *walker) candidate(p string, d fs.DirEntry) (c candidate, reason string, refused bool) {
	if d.Type()&fs.ModeSymlink == 0 {
		info, err := d.Info()
		if err != nil {
			return c, "cannot be read: " + rootCause(err), false
		}
		if why := w.secrets.File(p); why != "" {
			return c, files.SkipReason(why, false), true
		}
		if reason := w.precheck(p, info); reason != "" {
			return c, reason, false
		}
		return candidate{path: p, real: p, info: info}, "", false
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return c, "broken symbolic link", false
	}
	info, err := os.Stat(target)
	if err != nil {
		return c, "cannot be read: " + rootCause(err), false
	}
	if info.IsDir() {
		if why := w.secrets.Dir(target); why != "" {
			return c, files.SkipReason(why, true), false
		}
		return c, "symbolic link to a directory (not followed)", false
	}
	if why := w.secrets.File(p, target); why != "" {
		return c, files.SkipReason(why, false), true
	}
	if !files.Within(w.root, target) {
		return c, "symbolic link out of the indexed tree (not followed)", true
	}
	if reason := w.precheck(target, info); reason != "" {
		return c, reason, false
	}
	return candidate{path: p, real: target, info: info}, "", false
}

// precheck returns why a file is skipped before it is opened, "" when it
// is a candidate.
func (w *walker) precheck(p string, info fs.FileInfo) string {
	switch {
	case !info.Mode().IsRegular():
		return "not a regular file"
	case info.Size() == 0:
		return "empty"
	case info.Size() > w.limit:
		return fmt.Sprintf("too large (%d bytes, max %d)", info.Size(), w.limit)
	case binaryExts[strings.ToLower(filepath.Ext(p))]:
		return "binary"
	}
	return ""
}

// read reads a candidate. Listing and reading are apart in time, so the
// file must still resolve inside the tree, still not be sensitive, and be
// the very file that was listed. It returns the text and whether it was
// converted from Windows-1252, or why the file is skipped and whether that
// refuses it (see walker.refuse).
func (w *walker) read(c candidate) (text string, converted bool, reason string, refused bool) {
	real, err := filepath.EvalSymlinks(c.path)
	if err != nil {
		return "", false, "cannot be read: " + rootCause(err), false
	}
	if why := w.secrets.File(c.path, real); why != "" {
		return "", false, files.SkipReason(why, false), true
	}
	if !files.Within(w.root, real) {
		return "", false, "changed while being indexed (it now leads out of the indexed tree)", true
	}
	data, err := files.ReadRegular(real, c.info, w.limit)
	var large *files.TooLargeError
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "", false, "permission denied", false
	case errors.Is(err, files.ErrChanged):
		return "", false, "changed while being indexed", false
	case errors.As(err, &large):
		return "", false, "too large (" + large.Error() + ")", false
	case err != nil:
		return "", false, "cannot be read: " + rootCause(err), false
	}
	if why := w.secrets.Opened(c.info, data); why != "" {
		return "", false, files.SkipReason(why, false), true
	}
	text, converted, reason = decodeText(data)
	if reason != "" {
		return "", false, reason, false
	}
	if strings.TrimSpace(text) == "" {
		return "", false, "empty", false
	}
	return text, converted, "", false
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
