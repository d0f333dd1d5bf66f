package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/app/attach"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// An export writes a session as markdown (ui/format's SessionMarkdown),
// its images in a directory beside it (NAME-images for NAME.md), the one
// way the workbench's /export and `jarvis sessions export` do it. Without
// a path it goes to the exports directory under the data directory, not
// wherever jarvis was started; a path may start with ~ and may name a
// directory. An export never replaces a file: when the name is taken it
// gets a suffix (-2, -3, …), its images directory with it, and the
// sentence that reports it says so.

// Export says what an export wrote.
type Export struct {
	// Path is the file written; Asked the path asked for when a file was
	// there already and the export took the next free name.
	Path  string `json:"path"`
	Asked string `json:"asked,omitempty"`
	// ImageDir holds the images (empty when the session has none), and
	// Images counts the files written there.
	ImageDir string `json:"image_dir,omitempty"`
	Images   int    `json:"images"`
}

// ExportDir is where an export goes when no path is given:
// $XDG_DATA_HOME/jarvis/exports, else ~/.local/share/jarvis/exports.
func ExportDir() (string, error) {
	data := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(data) { // the XDG spec: a relative value is ignored
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no data directory: set XDG_DATA_HOME or HOME, or give the export a path (%w)", err)
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "jarvis", "exports"), nil
}

// ExportName is the file name of an export that was given none.
func ExportName(id string, now time.Time) string {
	short := id
	if len(short) > 8 {
		short = short[:8]
	}
	return fmt.Sprintf("jarvis-%s-%s.md", short, now.Format("20060102-150405"))
}

// ExportPath resolves what an export was given to an absolute file
// path: "" is a new file in the exports directory (created as needed),
// ~ is the home directory, and a directory (existing, or written with a
// trailing slash) gets a file named as the default one. A file's
// directory must exist.
func ExportPath(arg, id string, now time.Time) (string, error) {
	if arg == "" {
		dir, err := ExportDir()
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("cannot create the exports directory: %w", err)
		}
		return filepath.Join(dir, ExportName(id, now)), nil
	}
	path := attach.ExpandHome(arg)
	if strings.HasPrefix(path, "~") {
		return "", fmt.Errorf("%s: only ~ and ~/ are expanded (the home directory); give the path in full", arg)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(abs); err == nil && info.IsDir() || strings.HasSuffix(arg, "/") {
		if err := dirExists(abs, arg); err != nil {
			return "", err
		}
		return filepath.Join(abs, ExportName(id, now)), nil
	}
	if err := dirExists(filepath.Dir(abs), arg); err != nil {
		return "", err
	}
	return abs, nil
}

// dirExists says, in the person's terms, why dir cannot hold an export.
func dirExists(dir, arg string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: there is no directory %s; create it, or give another path", arg, dir)
	case err != nil:
		return err
	case !info.IsDir():
		return fmt.Errorf("%s: %s is a file, not a directory", arg, dir)
	}
	return nil
}

// ExportedText is the sentence that says where an export went.
func ExportedText(res Export) string {
	text := "Exported the session to " + res.Path
	if res.Asked != "" {
		text = fmt.Sprintf("%s already exists, so the session was exported to %s", res.Asked, res.Path)
	}
	if res.Images > 0 {
		text += fmt.Sprintf(", its %s to %s", format.Count(res.Images, "image"), res.ImageDir)
	}
	return text + "."
}

// WriteExport writes sess as markdown to path, or to path with a suffix
// when path or its images directory exists, with its images in
// NAME-images beside it, which the markdown links to by relative paths.
// What it could not finish it removes: there is no half-written export.
func WriteExport(s *sessions.Store, sess sessions.Session, msgs []sessions.Message, path string) (res Export, err error) {
	var images []*sessions.Image
	for i := range msgs {
		for j := range msgs[i].Images {
			images = append(images, &msgs[i].Images[j])
		}
	}
	if len(images) > 0 {
		if err := s.FillImages(msgs); err != nil {
			return res, err
		}
	}
	f, final, imageDir, err := reserveExport(path, len(images) > 0)
	if err != nil {
		return res, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(final)
			if imageDir != "" {
				os.RemoveAll(imageDir)
			}
		}
	}()
	res = Export{Path: final}
	if final != path {
		res.Asked = path
	}
	var opts format.ExportOptions
	if sess.Changes > 0 {
		if _, opts.Changes, err = s.Changes(sess.ID); err != nil {
			return res, err
		}
	}
	if imageDir != "" {
		res.ImageDir = imageDir
		written := map[string]bool{}
		for _, im := range images {
			name := imageFileName(*im)
			if written[name] {
				continue
			}
			if err := os.WriteFile(filepath.Join(imageDir, name), im.Data, 0o644); err != nil {
				return res, err
			}
			written[name] = true
		}
		res.Images = len(written)
		rel := filepath.Base(imageDir)
		opts.ImageLink = func(im sessions.Image) string { return rel + "/" + imageFileName(im) }
	}
	if _, err := f.WriteString(format.SessionMarkdownWith(sess, msgs, opts)); err != nil {
		return res, err
	}
	return res, f.Close()
}

// maxSuffix bounds the names tried for one export.
const maxSuffix = 999

// reserveExport creates the export's file, at path or, when path (or the
// images directory that would go with it) exists, at the first free
// NAME-2.md, NAME-3.md, …, and its images directory when it has images.
// The file is created exclusively: a file that appears meanwhile is not
// replaced either.
func reserveExport(path string, withImages bool) (*os.File, string, string, error) {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	for n := 1; n <= maxSuffix; n++ {
		name := path
		if n > 1 {
			name = fmt.Sprintf("%s-%d%s", base, n, ext)
		}
		dir := ""
		if withImages {
			dir = strings.TrimSuffix(name, ext) + "-images"
			if _, err := os.Lstat(dir); err == nil {
				continue
			}
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", "", err
		}
		if dir != "" {
			if err := os.Mkdir(dir, 0o755); err != nil {
				f.Close()
				os.Remove(name)
				if errors.Is(err, fs.ErrExist) {
					continue
				}
				return nil, "", "", err
			}
		}
		return f, name, dir, nil
	}
	return nil, "", "", fmt.Errorf("%s and %d names after it are taken; give the export another path", path, maxSuffix-1)
}

// imageFileName names an exported image by its content: the start of
// its hash and the extension of its format.
func imageFileName(im sessions.Image) string {
	ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}[im.MIMEType]
	if ext == "" {
		ext = ".bin"
	}
	h := im.SHA256
	if len(h) > 16 {
		h = h[:16]
	}
	return h + ext
}
