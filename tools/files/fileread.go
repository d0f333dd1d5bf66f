// Package files holds the built-in tool that reads the local file system,
// file_read, and the rules every tool that reads files applies (memory
// indexing among them): Secrets, the credential stores, histories and keys
// that are never read, and Reach, the directories read without asking.
package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/tools"
)

// MaxFileSize is the most file_read returns (1 MiB): a whole file up to
// that size, or a line range of a larger one.
const MaxFileSize = 1 << 20

// FileRead reads a text file with the checks of the spec, in its order:
// empty path, sensitive name, existence and type, reach (after resolving
// symlinks), size, UTF-8. A FIFO or device is never opened: opening one can
// block forever.
//
// Its reach (Reach) is the working directory, where a path outside needs
// confirmation (asked for through ConfirmationFor), or exactly the
// configured allowed directories, outside which it refuses. Sensitive
// files (Secrets) are refused everywhere, asked or not (Refuse), and so is
// a file whose content is a key or a token, or that is a hard link to a
// sensitive file. A grant of a read outside covers its directory
// (GrantScope).
type FileRead struct {
	reach *Reach
}

// readSetting is where file_read's reach is configured.
const readSetting = "[tool.file_read] allowed_dirs"

// NewFileRead builds file_read with the allowed directories from its
// settings. A configured directory that does not exist does not stop the
// tool from being listed; calling it fails with the reason.
func NewFileRead(deps tools.Deps) (tools.Tool, error) {
	return &FileRead{reach: NewReachIn(readSetting, deps.For("file_read").AllowedDirs, deps.WorkDir)}, nil
}

// NewFileReadIn builds file_read reaching dirs (the working directory,
// asking elsewhere, when dirs is empty).
func NewFileReadIn(dirs []string) (*FileRead, error) {
	r := NewReach(readSetting, dirs)
	if r.Err() != nil {
		return nil, r.Err()
	}
	return &FileRead{reach: r}, nil
}

var fileReadSpec = tools.Spec{
	Name: "file_read",
	Description: "Read the contents of a UTF-8 text file, at most 1 MiB of it (a larger one in parts, with start_line and max_lines). Files in the working directory are read at once; " +
		"other paths need the user's approval, or are refused when the user limited the tool to some directories. " +
		"Sensitive files (keys, credentials, tokens, .env, shell histories) are always refused.",
	Parameters: tools.Params(
		tools.StringParam("path", "Path to the file to read", true),
		tools.IntegerParam("start_line", "First line to return, from 1 (default: 1); with max_lines, reads a long file in parts", false),
		tools.IntegerParam("max_lines", "Maximum lines to return (default: all)", false),
	),
	Category:       "filesystem",
	TimeoutSeconds: 10,
}

// Spec returns file_read's spec, with the directories it reads without
// asking in its metadata so the user can see them.
func (f *FileRead) Spec() tools.Spec {
	s := fileReadSpec
	if dirs := f.reach.Dirs(); len(dirs) > 0 {
		s.Metadata = map[string]any{"reach": dirs}
	}
	return s
}

// Refuse refuses, before anyone is asked, a sensitive file and a path
// past the configured allowed directories.
func (f *FileRead) Refuse(args tools.Args) *tools.Refusal {
	path := args.String("path")
	if strings.TrimSpace(path) == "" {
		return nil // the call fails saying so
	}
	if ref := f.reach.Secrets().Refuse(path); ref != nil {
		return ref
	}
	return f.reach.Refuse(path, "read")
}

// ConfirmationFor asks before reading outside the working directory.
func (f *FileRead) ConfirmationFor(args tools.Args) (bool, string) {
	return f.reach.ConfirmationFor(args.String("path"), "reads")
}

// GrantScope is the directory of the file: a grant covers reads there.
func (f *FileRead) GrantScope(args tools.Args) tools.Scope {
	return f.reach.DirScope(args.String("path"), false, "reads in %s (not its subfolders)")
}

// Execute reads args["path"].
func (f *FileRead) Execute(ctx context.Context, args tools.Args) tools.Result {
	if err := f.reach.Err(); err != nil {
		return tools.Fail("file_read is misconfigured: %v. Fix allowed_dirs under [tool.file_read] in the config file.", err)
	}
	path := args.String("path")
	if strings.TrimSpace(path) == "" {
		return tools.Fail("No path provided.")
	}
	maxLines, _, err := args.Int("max_lines")
	if err != nil {
		return tools.Fail("Invalid arguments: %s.", err)
	}
	startLine, _, err := args.Int("start_line")
	if err != nil {
		return tools.Fail("Invalid arguments: %s.", err)
	}
	if startLine < 0 || maxLines < 0 {
		return tools.Fail("Invalid arguments: start_line and max_lines count from 1.")
	}
	secrets := f.reach.Secrets()
	abs := f.reach.Abs(path)
	if why := secrets.File(path, Resolve(abs)); why != "" {
		return tools.Fail("%s", Denied(path, why))
	}
	info, err := os.Stat(abs) // follows symlinks: the target is what counts
	if err != nil {
		if os.IsPermission(err) {
			return tools.Fail("Permission denied: %s", shown(path))
		}
		return tools.Fail("File not found: %s", shown(path))
	}
	if !info.Mode().IsRegular() {
		return tools.Fail("Not a file: %s", shown(path))
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return tools.Fail("File not found: %s", shown(path))
	}
	if why := secrets.File(real); why != "" {
		return tools.Fail("%s", Denied(path, why))
	}
	if !f.reach.Permits(real, tools.Confirmed(ctx)) {
		return f.reach.Outside(path, "read")
	}
	if err := ctx.Err(); err != nil {
		return tools.Fail("Cancelled.")
	}
	if info.Size() > MaxFileSize {
		return f.readLarge(ctx, path, real, info, startLine, maxLines)
	}
	data, err := ReadRegular(real, info, MaxFileSize)
	if err != nil {
		return tools.Fail("%s", readFailure(path, err))
	}
	if why := secrets.Opened(info, data); why != "" {
		return tools.Fail("%s", Denied(path, why))
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return tools.Fail("Cannot read %s: it is not a UTF-8 text file (binary content).", shown(path))
	}
	// The write tools change only a file the model saw as it is.
	reads.saw(tools.CallOf(ctx).Session, real, data, info.ModTime())
	content := string(data)
	meta := map[string]any{"path": real, "size_bytes": len(data)}
	if maxLines > 0 || startLine > 1 {
		lines := strings.SplitAfter(content, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		first := max(startLine, 1)
		if first > len(lines) {
			return tools.Fail("start_line %d is past the end of %s, which has %d lines.", first, shown(path), len(lines))
		}
		last := len(lines)
		if maxLines > 0 {
			last = min(first-1+maxLines, len(lines))
		}
		if first > 1 || last < len(lines) {
			content = strings.TrimRight(strings.Join(lines[first-1:last], ""), "\n")
			meta["truncated"] = true
			meta["total_lines"] = len(lines)
			meta["start_line"], meta["end_line"] = first, last
		}
	}
	r := tools.OK(content)
	r.Metadata = meta
	return r
}

// readLarge reads a line range of a file larger than MaxFileSize (see
// readRange): the limit is on what is returned. Without a range it says
// how to ask for one.
func (f *FileRead) readLarge(ctx context.Context, path, real string, info os.FileInfo, startLine, maxLines int) tools.Result {
	if startLine <= 1 && maxLines == 0 {
		return tools.Fail("File too large to return whole: %d bytes (file_read returns at most %d). Read a part of it: give start_line and max_lines (for example start_line 1 and max_lines 200).", info.Size(), MaxFileSize)
	}
	first := max(startLine, 1)
	lr, err := readRange(ctx, real, info, first, maxLines)
	var large *rangeTooLargeError
	switch {
	case errors.Is(err, errPastEnd):
		return tools.Fail("start_line %d is past the end of %s, which has %d lines.", first, shown(path), lr.total)
	case errors.As(err, &large):
		return tools.Fail("Lines %d-%d of %s hold more than %d bytes, the most file_read returns; ask for fewer lines (max_lines).", large.first, large.last, shown(path), MaxFileSize)
	case ctx.Err() != nil:
		return tools.Fail("Cancelled.")
	case err != nil:
		return tools.Fail("%s", readFailure(path, err))
	}
	data := []byte(lr.content)
	if why := NewSecrets().Opened(info, data); why != "" {
		return tools.Fail("%s", Denied(path, why))
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return tools.Fail("Cannot read %s: it is not a UTF-8 text file (binary content).", shown(path))
	}
	// Not noted as seen: the model saw a part of the file, and the write
	// tools change only a file the model saw whole.
	r := tools.OK(lr.content)
	r.Metadata = map[string]any{"path": real, "size_bytes": info.Size(), "truncated": true,
		"total_lines": lr.total, "start_line": lr.first, "end_line": lr.last}
	return r
}

// ErrChanged means a file is no longer the one that was checked: it was
// replaced (by a FIFO, a link, another file) between the check and the read.
var ErrChanged = errors.New("it changed while being read")

// TooLargeError means a file grew past the limit after it was checked.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("more than %d bytes (max %d)", e.Limit, e.Limit)
}

// ReadRegular opens real (a path without symbolic links) without blocking
// (a path swapped for a FIFO since it was checked cannot hang us) and
// without following a link in its last element, confirms it is still the
// regular file described by checked, and reads at most limit bytes. A file
// swapped since the check is ErrChanged.
func ReadRegular(real string, checked os.FileInfo, limit int64) ([]byte, error) {
	file, err := openChecked(real, checked)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

// readFailure is file_read's message for a ReadRegular error, naming the
// path as the caller gave it.
func readFailure(path string, err error) string {
	var large *TooLargeError
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied: " + shown(path)
	case errors.Is(err, ErrChanged):
		return fmt.Sprintf("Not a file: %s (%v)", shown(path), err)
	case errors.As(err, &large):
		return fmt.Sprintf("File too large: %v.", large)
	}
	return fmt.Sprintf("Cannot read %s: %v", shown(path), err)
}
