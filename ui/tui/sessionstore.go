package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// storeAdapter is the SessionStore over the database's sessions package.
//
// Writes go through the database's queue (sessions' Queued methods): a
// reply never waits for another process to let go of the file, and a
// message is never lost because it did. Reads flush the queue first, so
// a listing, a reload or an export shows everything said so far.
type storeAdapter struct{ s *sessions.Store }

// NewSessionStore adapts a sessions.Store for the TUI.
func NewSessionStore(s *sessions.Store) SessionStore { return storeAdapter{s} }

// flushWait bounds how long a read waits for this process's own queued
// writes before reading what has landed.
const flushWait = 5 * time.Second

func (a storeAdapter) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), flushWait)
	defer cancel()
	a.s.Flush(ctx)
}

func (a storeAdapter) Create(m SessionMeta) (string, error) {
	sess, err := a.s.CreateQueued(sessions.Meta{Model: m.Model, Agent: m.Agent, Tools: m.Tools})
	return sess.ID, err
}

func (a storeAdapter) Append(id string, msgs ...sessions.Message) error {
	return a.s.AppendQueued(id, msgs...)
}

func (a storeAdapter) Branch(id string, b sessions.Branch) error { return a.s.NewBranchQueued(id, b) }

func (a storeAdapter) SetBranch(id, branch string) error { return a.s.SetBranchQueued(id, branch) }

func (a storeAdapter) SetMeta(id string, m SessionMeta) error {
	return a.s.SetMetaQueued(id, sessions.Meta{Model: m.Model, Agent: m.Agent, Tools: m.Tools})
}

func (a storeAdapter) Fork(id, branch string, upTo int, m SessionMeta) (string, error) {
	sess, err := a.s.ForkQueued(id, branch, upTo, sessions.Meta{Title: m.Title, Model: m.Model, Agent: m.Agent, Tools: m.Tools})
	return sess.ID, err
}

func summary(s sessions.Session) SessionSummary {
	return SessionSummary{
		ID: s.ID, Title: s.Title, Model: s.Model, Agent: s.Agent, Tools: s.Tools, Updated: s.UpdatedAt, Messages: s.Messages,
		Usage: events.Usage{PromptTokens: s.Totals.PromptTokens, OutputTokens: s.Totals.OutputTokens,
			CostUSD: s.Totals.CostUSD, ToolCostUSD: s.Totals.ToolCostUSD},
		Parent: s.Parent, ParentSeq: s.ParentSeq, Branches: len(s.Branches),
	}
}

func (a storeAdapter) List(limit int) ([]SessionSummary, error) {
	a.flush()
	list, err := a.s.List(limit)
	out := make([]SessionSummary, len(list))
	for i, s := range list {
		out[i] = summary(s)
	}
	return out, err
}

// Load reads the whole tree with every image's bytes: flipping to
// another attempt must not wait for the database.
func (a storeAdapter) Load(id string) (SessionSummary, *sessions.Tree, error) {
	a.flush()
	sess, msgs, err := a.s.Load(id)
	if err != nil {
		return SessionSummary{}, nil, err
	}
	if err := a.s.FillImages(msgs); err != nil {
		return SessionSummary{}, nil, err
	}
	return summary(sess), sessions.TreeOf(sess, msgs), nil
}

func (a storeAdapter) Last() (SessionSummary, bool, error) {
	a.flush()
	s, ok, err := a.s.Last()
	return summary(s), ok, err
}

// Export writes the markdown to path and the session's images, once
// each, in a directory beside it (NAME-images for NAME.md), which the
// markdown links to by relative paths.
func (a storeAdapter) Export(id, path string) (ExportResult, error) {
	a.flush()
	sess, msgs, err := a.s.Load(id)
	if err != nil {
		return ExportResult{}, err
	}
	return ExportSession(a.s, sess, msgs, path)
}

// ExportSession writes sess as markdown to path with its images beside
// it (see storeAdapter.Export); `jarvis` commands that export share it.
func ExportSession(s *sessions.Store, sess sessions.Session, msgs []sessions.Message, path string) (ExportResult, error) {
	res := ExportResult{Path: path}
	var images []*sessions.Image
	for i := range msgs {
		for j := range msgs[i].Images {
			images = append(images, &msgs[i].Images[j])
		}
	}
	var opts format.ExportOptions
	if len(images) > 0 {
		if err := s.FillImages(msgs); err != nil {
			return res, err
		}
		res.ImageDir = strings.TrimSuffix(path, filepath.Ext(path)) + "-images"
		if err := os.MkdirAll(res.ImageDir, 0o755); err != nil {
			return res, err
		}
		written := map[string]bool{}
		for _, im := range images {
			name := imageFileName(*im)
			if written[name] {
				continue
			}
			if err := os.WriteFile(filepath.Join(res.ImageDir, name), im.Data, 0o644); err != nil {
				return res, err
			}
			written[name] = true
		}
		res.Images = len(written)
		rel := filepath.Base(res.ImageDir)
		opts.ImageLink = func(im sessions.Image) string { return rel + "/" + imageFileName(im) }
	}
	if err := os.WriteFile(path, []byte(format.SessionMarkdownWith(sess, msgs, opts)), 0o644); err != nil {
		return res, err
	}
	return res, nil
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
	return fmt.Sprintf("%s%s", h, ext)
}
