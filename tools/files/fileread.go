// Package files holds the built-in tools that read the local file system.
package files

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/tools"
)

// MaxFileSize is the largest file file_read returns (1 MiB).
const MaxFileSize = 1 << 20

// FileRead reads a text file with the checks of the spec, in its order:
// empty path, sensitive name, existence and type, allowed directories (after
// resolving symlinks), size, UTF-8. A FIFO or device is never opened: opening
// one can block forever.
type FileRead struct {
	// allowed are absolute, symlink-free directories; empty means any.
	allowed []string
	// misconfigured is set when a configured directory is unusable: every
	// call then fails saying so, and no file is read (an allowed list
	// that silently became "anything" or "nothing" would be worse).
	misconfigured error
}

// NewFileRead builds file_read with the allowed directories from its
// settings. A configured directory that does not exist does not stop the
// tool from being listed; calling it fails with the reason.
func NewFileRead(deps tools.Deps) (tools.Tool, error) {
	f, err := NewFileReadIn(deps.For("file_read").AllowedDirs)
	if err != nil {
		return &FileRead{misconfigured: err}, nil
	}
	return f, nil
}

// NewFileReadIn builds file_read restricted to dirs (none: unrestricted).
func NewFileReadIn(dirs []string) (*FileRead, error) {
	f := &FileRead{}
	for _, d := range dirs {
		abs, err := filepath.Abs(expandHome(d))
		if err != nil {
			return nil, fmt.Errorf("allowed directory %q: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("allowed directory %q does not exist or cannot be resolved: %w", d, err)
		}
		f.allowed = append(f.allowed, real)
	}
	return f, nil
}

var fileReadSpec = tools.Spec{
	Name:        "file_read",
	Description: "Read the contents of a UTF-8 text file (at most 1 MiB). Sensitive files (keys, .env, credentials) are refused.",
	Parameters: tools.Params(
		tools.StringParam("path", "Path to the file to read", true),
		tools.IntegerParam("max_lines", "Maximum lines to return (default: all)", false),
	),
	Category:       "filesystem",
	TimeoutSeconds: 10,
}

// Spec returns file_read's spec, with the allowed directories in its
// metadata so the user can see them.
func (f *FileRead) Spec() tools.Spec {
	s := fileReadSpec
	if len(f.allowed) > 0 {
		s.Metadata = map[string]any{"allowed_dirs": f.allowed}
	}
	return s
}

// Execute reads args["path"].
func (f *FileRead) Execute(ctx context.Context, args tools.Args) tools.Result {
	if f.misconfigured != nil {
		return tools.Fail("file_read is misconfigured: %v. Fix allowed_dirs under [tool.file_read] in the config file.", f.misconfigured)
	}
	path := args.String("path")
	if strings.TrimSpace(path) == "" {
		return tools.Fail("No path provided.")
	}
	maxLines, _, err := args.Int("max_lines")
	if err != nil {
		return tools.Fail("Invalid arguments: %s.", err)
	}
	if isSensitive(path) {
		return tools.Fail("Access denied: %s is a sensitive file.", path)
	}
	abs, err := filepath.Abs(expandHome(path))
	if err != nil {
		return tools.Fail("File not found: %s", path)
	}
	info, err := os.Stat(abs) // follows symlinks: the target is what counts
	if err != nil {
		if os.IsPermission(err) {
			return tools.Fail("Permission denied: %s", path)
		}
		return tools.Fail("File not found: %s", path)
	}
	if !info.Mode().IsRegular() {
		return tools.Fail("Not a file: %s", path)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return tools.Fail("File not found: %s", path)
	}
	if isSensitive(real) {
		return tools.Fail("Access denied: %s is a sensitive file.", path)
	}
	if !f.inAllowed(real) {
		return tools.Fail("Access denied: %s is outside allowed directories.", path)
	}
	if info.Size() > MaxFileSize {
		return tools.Fail("File too large: %d bytes (max %d).", info.Size(), MaxFileSize)
	}
	if err := ctx.Err(); err != nil {
		return tools.Fail("Cancelled.")
	}
	data, msg := readChecked(path, real, info)
	if msg != "" {
		return tools.Fail("%s", msg)
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return tools.Fail("Cannot read %s: it is not a UTF-8 text file (binary content).", path)
	}
	content := string(data)
	meta := map[string]any{"path": real, "size_bytes": len(data)}
	if maxLines > 0 {
		lines := strings.SplitAfter(content, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > maxLines {
			content = strings.TrimRight(strings.Join(lines[:maxLines], ""), "\n")
			meta["truncated"] = true
			meta["total_lines"] = len(lines)
		}
	}
	r := tools.OK(content)
	r.Metadata = meta
	return r
}

// readChecked opens the resolved path without blocking (O_NONBLOCK: a path
// swapped for a FIFO since the Stat cannot hang us), confirms it is still the
// regular file that was checked, and reads at most MaxFileSize bytes. It
// returns the failure message, naming the path as the caller gave it.
func readChecked(path, real string, checked os.FileInfo) ([]byte, string) {
	fd, err := syscall.Open(real, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if err == syscall.EACCES {
			return nil, "Permission denied: " + path
		}
		return nil, fmt.Sprintf("Cannot open %s: %v", path, err)
	}
	file := os.NewFile(uintptr(fd), real)
	defer file.Close()
	now, err := file.Stat()
	if err != nil || !now.Mode().IsRegular() || !os.SameFile(now, checked) {
		return nil, fmt.Sprintf("Not a file: %s (it changed while being read)", path)
	}
	data, err := io.ReadAll(io.LimitReader(file, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Sprintf("Cannot read %s: %v", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Sprintf("File too large: more than %d bytes (max %d).", MaxFileSize, MaxFileSize)
	}
	return data, ""
}

func (f *FileRead) inAllowed(real string) bool {
	if len(f.allowed) == 0 {
		return true
	}
	for _, dir := range f.allowed {
		if real == dir || strings.HasPrefix(real, dir+string(filepath.Separator)) || dir == string(filepath.Separator) {
			return true
		}
	}
	return false
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// sensitiveDirs are directories whose every file holds secrets.
var sensitiveDirs = map[string]bool{".ssh": true, ".gnupg": true, ".aws": true}

// IsSensitive reports whether file_read would refuse path for its name,
// so that other tools that read files (memory_index) apply the same rule.
func IsSensitive(path string) bool { return isSensitive(path) }

// isSensitive reports whether the file's name (or a directory on its path)
// marks it as holding secrets. The names are the reference's, plus
// credential directories.
func isSensitive(path string) bool {
	clean := filepath.Clean(path)
	for _, part := range strings.Split(filepath.Dir(clean), string(filepath.Separator)) {
		if sensitiveDirs[part] {
			return true
		}
	}
	name := strings.ToLower(filepath.Base(clean))
	switch name {
	case ".env", ".secret", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", ".htpasswd", ".pgpass", ".netrc", "credentials":
		return true
	}
	if strings.HasPrefix(name, ".env.") || strings.HasPrefix(name, "credentials.") {
		return true
	}
	for _, ext := range []string{".env", ".secrets", ".pem", ".key", ".p12", ".pfx", ".jks"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}
