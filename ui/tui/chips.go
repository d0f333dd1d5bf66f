package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/attach"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// Images attached to the next message: /image PATH reads one (in a
// command: files are never read in Update), a pasted path to an image is
// offered for attaching, the chip row above the prompt shows them, ctrl+x
// and /image clear take them off.

// pasteOffer is an image whose path was pasted into the prompt; tab
// attaches it and takes the path out of the prompt.
type pasteOffer struct {
	text  string
	image engine.Image
}

// imageLoadedMsg carries an image read for /image, or for a pasted path
// (pasted set: a failure then means the text was not an image path).
type imageLoadedMsg struct {
	image  engine.Image
	err    error
	pasted string
}

// pathsMsg carries the completions of a path for /image.
type pathsMsg struct {
	input      string
	candidates []string
	shown      []string
}

// takeImages hands the attached images to the message being sent.
func (m *model) takeImages() []engine.Image {
	ims := m.convo.images
	m.convo.images, m.convo.offer = nil, nil
	m.layout()
	return ims
}

// keepImages puts back the images of a message that was not sent.
func (m *model) keepImages(in agent.Input) {
	if in.Again || len(in.Images) == 0 {
		return
	}
	m.convo.images = append(slices.Clone(in.Images), m.convo.images...)
	m.layout()
}

// imageCommand is /image PATH, /image clear, and /image (the list).
func (m *model) imageCommand(arg string) tea.Cmd {
	switch arg {
	case "":
		if len(m.convo.images) == 0 {
			m.addNote("No images attached. /image PATH attaches one to the next message (PNG, JPEG, WebP or GIF; tab completes the path); pasting an image's path offers to attach it.", false)
			return nil
		}
		var names []string
		for _, im := range m.convo.images {
			names = append(names, attach.Describe(im))
		}
		m.addNote("Attached to the next message: "+strings.Join(names, "; ")+". ctrl+x takes off the last, /image clear all.", false)
		return nil
	case "clear":
		n := len(m.convo.images)
		m.convo.images, m.convo.offer = nil, nil
		m.layout()
		if n == 0 {
			return m.setStatus("no images were attached")
		}
		return m.setStatus("took off " + format.Count(n, "attached image"))
	}
	return m.loadImage(arg, "")
}

func (m *model) loadImage(path, pasted string) tea.Cmd {
	maxBytes := m.opts.Config.Images.MaxBytes
	return func() tea.Msg {
		im, err := attach.File(path, maxBytes)
		return imageLoadedMsg{image: im, err: err, pasted: pasted}
	}
}

func (m *model) imageLoaded(msg imageLoadedMsg) tea.Cmd {
	if msg.pasted != "" {
		// A pasted path is offered only while it is still in the prompt,
		// and quietly not at all when it is not an image.
		if msg.err == nil && strings.Contains(m.input.value(), msg.pasted) {
			m.convo.offer = &pasteOffer{text: msg.pasted, image: msg.image}
			m.layout()
		}
		return nil
	}
	if msg.err != nil {
		m.addNote(sentence(explain(msg.err)), true)
		return nil
	}
	m.convo.images = append(m.convo.images, msg.image)
	m.layout()
	return m.setStatus("attached " + attach.Describe(msg.image) + " to the next message")
}

// acceptImageOffer attaches the image whose path was pasted and takes the
// path out of the prompt.
func (m *model) acceptImageOffer() tea.Cmd {
	o := m.convo.offer
	m.convo.offer = nil
	if v := m.input.value(); strings.Contains(v, o.text) {
		m.input.set(strings.TrimSpace(strings.Replace(v, o.text, "", 1)))
	}
	m.convo.images = append(m.convo.images, o.image)
	m.layout()
	return m.setStatus("attached " + attach.Describe(o.image) + " to the next message")
}

// removeLastImage is ctrl+x.
func (m *model) removeLastImage() tea.Cmd {
	n := len(m.convo.images)
	if n == 0 {
		return nil
	}
	gone := m.convo.images[n-1]
	m.convo.images = m.convo.images[:n-1]
	m.layout()
	return m.setStatus("took off " + gone.Name)
}

// pasted looks at pasted text: when it is the path of a file, the file
// is read (in a command) to offer it as an image.
func (m *model) pasted(text string) tea.Cmd {
	path, ok := attach.PastedPath(text)
	if !ok {
		return nil
	}
	return m.loadImage(path, strings.TrimSpace(text))
}

// imageExts are what path completion offers first.
var imageExts = []string{".png", ".jpg", ".jpeg", ".webp", ".gif"}

// completePath completes the path of /image PATH in a command.
func (m *model) completePath() tea.Cmd {
	input := m.input.value()
	partial := strings.TrimLeft(strings.TrimPrefix(input, "/image"), " ")
	m.convo.completing = input
	return func() tea.Msg {
		cands, shown := pathCandidates(partial)
		return pathsMsg{input: input, candidates: cands, shown: shown}
	}
}

// pathCandidates lists what partial may complete to: directories (with a
// slash) and image files first, any file when no image matches. shown are
// the names as the suggestion line lists them.
func pathCandidates(partial string) ([]string, []string) {
	dirPart := partial[:strings.LastIndex(partial, "/")+1]
	base := partial[len(dirPart):]
	dir := attach.ExpandHome(dirPart)
	if partial == "~" {
		dirPart, base, dir = "~/", "", attach.ExpandHome("~")
	}
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	var images, others []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if info, err := os.Stat(filepath.Join(dir, name)); err == nil {
				isDir = info.IsDir()
			}
		}
		switch {
		case isDir:
			images = append(images, name+"/")
		case slices.Contains(imageExts, strings.ToLower(filepath.Ext(name))):
			images = append(images, name)
		default:
			others = append(others, name)
		}
	}
	names := images
	if len(names) == 0 {
		names = others
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = dirPart + n
	}
	return out, names
}

func (m *model) applyPaths(msg pathsMsg) {
	if msg.input != m.input.value() || msg.input != m.convo.completing {
		return // the prompt changed meanwhile
	}
	m.convo.completing = ""
	switch len(msg.candidates) {
	case 0:
		m.suggest = []string{"(no file matches)"}
	case 1:
		m.input.set("/image " + msg.candidates[0])
		m.suggest = nil
	default:
		if common := commonPrefix(msg.candidates); len(common) > len(strings.TrimLeft(strings.TrimPrefix(msg.input, "/image"), " ")) {
			m.input.set("/image " + common)
		}
		m.suggest = msg.shown
	}
	m.layout()
}

// chipRows is the lines the chip row takes above the prompt.
func (m *model) chipRows() int {
	if len(m.convo.images) == 0 && m.convo.offer == nil && m.convo.editing == nil {
		return 0
	}
	return 1
}

// chipView is the row above the prompt: an edit in progress, the images
// attached to the next message, an image whose path was pasted. It is
// exactly width cells wide.
func (m *model) chipView(width int) string {
	var parts []string
	if m.convo.editing != nil {
		parts = append(parts, m.st.accent.Render("✎ editing your question: enter asks again from it · esc cancels"))
	}
	switch n := len(m.convo.images); {
	case n > 0 && n <= 2:
		for _, im := range m.convo.images {
			parts = append(parts, m.st.accent.Render("▣ ")+safe.Text(attach.Describe(im)))
		}
	case n > 2:
		var size int
		names := make([]string, n)
		for i, im := range m.convo.images {
			names[i], size = im.Name, size+len(im.Data)
		}
		parts = append(parts, m.st.accent.Render(fmt.Sprintf("▣ %d images ", n))+safe.Text(strings.Join(names, ", "))+" · "+humanize.IBytes(uint64(size)))
	}
	if n := len(m.convo.images); n > 0 {
		parts = append(parts, m.st.muted.Render("ctrl+x takes off the last · /image clear"))
	}
	if o := m.convo.offer; o != nil {
		parts = append(parts, m.st.accent.Render("▣ the pasted path is an image: ")+safe.Text(attach.Describe(o.image))+m.st.accent.Render(" · tab attaches it"))
	}
	line := " " + strings.Join(parts, m.st.muted.Render("  ·  "))
	return padRight(ansi.Truncate(line, width, "…"), width)
}
