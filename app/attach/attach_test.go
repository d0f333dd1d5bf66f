package attach

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/internal/testfs"
)

func encoded(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpHeader is a lossless WebP whose header says w×h: what
// DecodeConfig reads (the picture itself is not needed).
func webpHeader(w, h int) []byte {
	var bits [4]byte
	binary.LittleEndian.PutUint32(bits[:], uint32(w-1)|uint32(h-1)<<14)
	chunk := append([]byte{0x2f}, bits[:]...)
	chunk = append(chunk, make([]byte, 8)...)
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(4+8+len(chunk)))
	b.WriteString("WEBPVP8L")
	binary.Write(&b, binary.LittleEndian, uint32(len(chunk)))
	b.Write(chunk)
	return b.Bytes()
}

func write(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFileReadsEachFormatByItsContent(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		data       []byte
		mime, name string
		w, h       int
	}{
		{encoded(t, "png", 800, 600), "image/png", "PNG", 800, 600},
		{encoded(t, "jpeg", 64, 48), "image/jpeg", "JPEG", 64, 48},
		{encoded(t, "gif", 10, 20), "image/gif", "GIF", 10, 20},
		{webpHeader(640, 480), "image/webp", "WebP", 640, 480},
	} {
		// The name lies about the format: the content decides.
		p := write(t, dir, "picture-"+c.name+".txt", c.data)
		im, err := File(p, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if im.MIMEType != c.mime || im.Width != c.w || im.Height != c.h || !bytes.Equal(im.Data, c.data) || im.Name != filepath.Base(p) {
			t.Errorf("%s: got %s %d×%d %q", c.name, im.MIMEType, im.Width, im.Height, im.Name)
		}
		if d := Describe(im); !strings.Contains(d, c.name) || !strings.Contains(d, "×") {
			t.Errorf("Describe = %q", d)
		}
	}
}

func TestFileRefusesWithTheReason(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.png")
	testfs.Mkfifo(t, fifo)
	big := write(t, dir, "big.png", append(encoded(t, "png", 4, 4), make([]byte, 2048)...))
	for _, c := range []struct {
		path string
		max  int64
		say  string
	}{
		{write(t, dir, "notes.png", []byte("just some text, named like an image\n")), 0, "its content is text (text/plain)"},
		{write(t, dir, "doc.pdf", []byte("%PDF-1.7\n...")), 0, "application/pdf"},
		{write(t, dir, "empty.png", nil), 0, "the file is empty"},
		{write(t, dir, "broken.png", []byte("\x89PNG\r\n\x1a\n\x00\x00")), 0, "starts like a PNG file but its header cannot be read"},
		{write(t, dir, "icon.bmp", []byte("BM\x00\x00\x00\x00\x00\x00\x00\x00")), 0, "image format models do not take (image/bmp)"},
		{big, 1024, "over the 1.0 KiB limit"},
		{filepath.Join(dir, "absent.png"), 0, "there is no such file"},
		{dir, 0, "it is a directory"},
		{fifo, 0, "not a regular file"},
		{"", 0, "no image path given"},
	} {
		_, err := File(c.path, c.max)
		if err == nil || !strings.Contains(err.Error(), c.say) {
			t.Errorf("%s: got %v, want %q", c.path, err, c.say)
		}
	}
}

func TestFileExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	write(t, home, "cat.png", encoded(t, "png", 3, 2))
	im, err := File("~/cat.png", 0)
	if err != nil || im.Width != 3 {
		t.Fatalf("~/cat.png: %+v, %v", im, err)
	}
}

func TestPastedPath(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/cat.png":               "/home/me/cat.png",
		"  '/tmp/My Pictures/a b.png'\n": "/tmp/My Pictures/a b.png",
		`"/tmp/x.jpg"`:                   "/tmp/x.jpg",
		`/tmp/My\ Pictures/a\ b.png`:     "/tmp/My Pictures/a b.png",
		"file:///tmp/a%20b.png":          "/tmp/a b.png",
		"~/Desktop/shot.png":             "~/Desktop/shot.png",
	} {
		got, ok := PastedPath(in)
		if !ok || got != want {
			t.Errorf("PastedPath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"hello world", "see /tmp/a.png", "/tmp/a.png\n/tmp/b.png", "file://server/share/a.png", "cat.png", ""} {
		if got, ok := PastedPath(in); ok {
			t.Errorf("PastedPath(%q) = %q, want no path", in, got)
		}
	}
}
