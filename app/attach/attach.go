// Package attach reads the images a person attaches to a message, for
// `jarvis ask --image` and the workbench's /image: it finds the format
// from the content (never from the name), refuses what a model cannot be
// sent (not PNG, JPEG, WebP or GIF; larger than the limit; not a regular
// file), and reads the size in pixels from the header without decoding
// the picture.
//
// It also recognises a pasted file path (quoted, escaped by a terminal's
// drag and drop, or a file:// URL), so the workbench can offer to attach
// an image whose path was pasted.
package attach

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF for image.DecodeConfig
	_ "image/jpeg" // registers JPEG
	_ "image/png"  // registers PNG
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/dustin/go-humanize"
	_ "golang.org/x/image/webp" // registers WebP

	"github.com/jarvis-workbench/jarvis/engine"
)

// DefaultMaxBytes is the largest image attached when the configuration
// sets no other limit (images.max_bytes). Vision models scale a picture
// down to a few hundred thousand pixels anyway; 20 MiB takes any photo a
// phone makes, and keeps one message (sent again with every later turn,
// stored once in the session) from weighing more than that.
const DefaultMaxBytes = 20 << 20

// formats are the MIME types sent, as net/http's content sniffing names
// them, with the names people know them by.
var formats = map[string]string{
	"image/png":  "PNG",
	"image/jpeg": "JPEG",
	"image/webp": "WebP",
	"image/gif":  "GIF",
}

// FormatName is the name of an image format ("PNG") for a MIME type.
func FormatName(mime string) string {
	if n, ok := formats[mime]; ok {
		return n
	}
	return mime
}

// File reads the image at path (a leading ~ is the home directory) and
// checks it can be sent: a regular file of at most maxBytes (0 means
// DefaultMaxBytes) whose content is PNG, JPEG, WebP or GIF.
func File(path string, maxBytes int64) (engine.Image, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if strings.TrimSpace(path) == "" {
		return engine.Image{}, errors.New("no image path given")
	}
	full := ExpandHome(path)
	info, err := os.Stat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return engine.Image{}, fmt.Errorf("cannot attach %s: there is no such file", path)
	case err != nil:
		return engine.Image{}, fmt.Errorf("cannot attach %s: %w", path, unwrapPath(err))
	case info.IsDir():
		return engine.Image{}, fmt.Errorf("cannot attach %s: it is a directory; give an image file", path)
	case !info.Mode().IsRegular():
		// A FIFO or a device could block or never end: never opened.
		return engine.Image{}, fmt.Errorf("cannot attach %s: it is not a regular file", path)
	case info.Size() > maxBytes:
		return engine.Image{}, tooBig(path, info.Size(), maxBytes)
	}
	f, err := os.Open(full)
	if err != nil {
		return engine.Image{}, fmt.Errorf("cannot attach %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	// The file may have grown since it was measured.
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return engine.Image{}, fmt.Errorf("cannot attach %s: %w", path, unwrapPath(err))
	}
	if int64(len(data)) > maxBytes {
		return engine.Image{}, tooBig(path, int64(len(data)), maxBytes)
	}
	return Decode(filepath.Base(full), data)
}

// Decode checks data is an image that can be sent and reads its size.
// name is what the image is called in messages.
func Decode(name string, data []byte) (engine.Image, error) {
	if len(data) == 0 {
		return engine.Image{}, fmt.Errorf("cannot attach %s: the file is empty", name)
	}
	mime := http.DetectContentType(data)
	if _, ok := formats[mime]; !ok {
		kind := strings.TrimSpace(strings.Split(mime, ";")[0])
		return engine.Image{}, fmt.Errorf("cannot attach %s: its content is %s, not an image a model can be sent; use PNG, JPEG, WebP or GIF", name, describeKind(kind))
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return engine.Image{}, fmt.Errorf("cannot attach %s: it starts like a %s file but its header cannot be read (%v); the file may be damaged", name, FormatName(mime), err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return engine.Image{}, fmt.Errorf("cannot attach %s: its header says it is %d×%d pixels", name, cfg.Width, cfg.Height)
	}
	return engine.Image{Name: name, MIMEType: mime, Data: data, Width: cfg.Width, Height: cfg.Height}, nil
}

// describeKind names a sniffed content type for a refusal.
func describeKind(mime string) string {
	switch {
	case strings.HasPrefix(mime, "text/"):
		return "text (" + mime + ")"
	case strings.HasPrefix(mime, "image/"):
		return "an image format models do not take (" + mime + ")"
	case mime == "application/octet-stream":
		return "not a format jarvis recognises"
	}
	return mime
}

func tooBig(path string, size, limit int64) error {
	return fmt.Errorf("cannot attach %s: it is %s, over the %s limit for an image; make it smaller, or raise max_bytes under [images] in the config",
		path, humanize.IBytes(uint64(size)), humanize.IBytes(uint64(limit)))
}

// unwrapPath drops the path from an *fs.PathError, which the message
// already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ExpandHome turns a leading ~ into the home directory.
func ExpandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

// Describe is an image in a few words: its name, format, size in bytes
// and pixels ("cat.png · PNG · 120 KiB · 800×600").
func Describe(im engine.Image) string {
	name := im.Name
	if name == "" {
		name = "image"
	}
	return fmt.Sprintf("%s · %s · %s · %d×%d", name, FormatName(im.MIMEType), humanize.IBytes(uint64(len(im.Data))), im.Width, im.Height)
}

// PastedPath reports whether text, as pasted, is one file path and
// returns it: surrounding quotes are removed, a file:// URL becomes its
// path, and the backslash escapes terminals add when a file is dragged
// onto them ("My\ Pictures") are undone. It does not look at the file.
func PastedPath(text string) (string, bool) {
	s := strings.TrimSpace(text)
	if s == "" || strings.ContainsAny(s, "\n\r") {
		return "", false
	}
	if len(s) >= 2 && (s[0] == '\'' && s[len(s)-1] == '\'' || s[0] == '"' && s[len(s)-1] == '"') {
		s = s[1 : len(s)-1]
	}
	if strings.HasPrefix(s, "file://") {
		u, err := url.Parse(s)
		if err != nil || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
			return "", false
		}
		s = u.Path
	} else if strings.Contains(s, `\`) {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	if !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~/") && !strings.HasPrefix(s, "./") && !strings.HasPrefix(s, "../") {
		return "", false
	}
	return s, true
}
