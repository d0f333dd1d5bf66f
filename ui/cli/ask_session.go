package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// askSessionFlags choose the session an ask goes on, if any.
type askSessionFlags struct {
	save, cont bool
	id         string
}

func (f *askSessionFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.save, "save", false, "save the exchange as a new session (its id is printed)")
	cmd.Flags().BoolVarP(&f.cont, "continue", "c", false, "go on the most recent session")
	cmd.Flags().StringVar(&f.id, "session", "", "go on the session with this id (or a unique prefix of it)")
}

func (f askSessionFlags) check() error {
	n := 0
	for _, on := range []bool{f.save, f.cont, f.id != ""} {
		if on {
			n++
		}
	}
	if n > 1 {
		return usageErr("--save starts a session, --continue and --session go on one: give only one of them")
	}
	return nil
}

func (f askSessionFlags) any() bool { return f.save || f.cont || f.id != "" }

// askSession is the session an ask is saved to: the conversation the
// model saw, rebuilt from the session's current line, and the writes of
// the run's messages, queued in order.
type askSession struct {
	store *sessions.Store
	// id is empty for a session --save starts until its first message:
	// a run refused before anything was said leaves no empty session.
	id    string
	title string
	isNew bool
	// meta is what the session ran with before the run.
	meta sessions.Meta
	conv *agent.Conversation

	mu   sync.Mutex
	tree *sessions.Tree
	err  error
	// lease holds the session while the run writes to it: a workbench
	// (or another ask) on it would interleave its lines with the run's.
	lease *sessions.Lease
}

// openAskSession opens (or, with --save, starts) the session, and makes
// its model, agent and tools the run's where no flag set them.
func (a *cmdline) openAskSession(f askSessionFlags, query string) (*askSession, error) {
	if !f.any() {
		return nil, nil
	}
	cfg, err := a.loadConfig(config.Flags{})
	if err != nil {
		return nil, err
	}
	db, err := a.openDB("ask")
	if err != nil {
		return nil, err
	}
	st := sessions.New(db)
	if f.save {
		s := &askSession{store: st, title: sessions.TitleFrom(query), isNew: true,
			conv: &agent.Conversation{}, tree: &sessions.Tree{}}
		a.closers = append(a.closers, s.release)
		return s, nil
	}
	id := f.id
	if f.cont {
		last, ok, err := st.Last()
		if err != nil {
			return nil, failErr("%v", err)
		}
		if !ok {
			return nil, usageErr("--continue: there is no session yet; start one with --save (or in the workbench)")
		}
		id = last.ID
	}
	sess, msgs, err := st.Load(id)
	if errors.Is(err, sessions.ErrNotFound) {
		return nil, usageErr("--session: %v; 'jarvis sessions list' lists them", err)
	} else if err != nil {
		return nil, usageErr("--session: %v", err)
	}
	lease, err := st.Hold(sess.ID, "jarvis ask")
	var held *sessions.HeldError
	if errors.As(err, &held) {
		return nil, failErr("%v: nothing was asked, as its lines and this run's would interleave. Ask again once it is closed there, or start a new session with --save", held)
	} else if err != nil {
		return nil, failErr("session %s: %v", sess.ID, err)
	}
	s := &askSession{store: st, id: sess.ID, title: sess.Title, lease: lease,
		meta: sessions.Meta{Model: sess.Model, Agent: sess.Agent, Tools: sess.Tools, NumCtx: sess.NumCtx}}
	a.closers = append(a.closers, s.release)
	tree := sessions.TreeOf(sess, msgs)
	path := tree.CurrentPath()
	if err := st.FillImages(path); err != nil {
		return nil, failErr("session %s: %v", sess.ID, err)
	}
	if sess.Model != "" || sess.Agent != "" {
		restore(cfg, sess)
	}
	cfg.UseSessionWindow(sess.NumCtx)
	s.tree, s.conv = tree, history.Conversation(path)
	return s, nil
}

// release lets the session go once the run's writes have landed (or
// waited their moment: they then stay in the queue's journal).
func (s *askSession) release() {
	s.mu.Lock()
	lease := s.lease
	s.lease = nil
	s.mu.Unlock()
	if lease == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.store.Flush(ctx)
	lease.Release()
}

// restore makes the session's model, agent and tools the configuration's,
// except where a flag set them.
func restore(cfg *config.Config, sess sessions.Session) {
	if sess.Model != "" && cfg.Source("model") != "flag --model" {
		cfg.Model = sess.Model
	}
	if sess.Agent != "" && cfg.Source("agent") != "flag --agent" {
		cfg.Agent = sess.Agent
	}
	if cfg.Source("tools") != "flag --tools" {
		cfg.Tools = slices.Clone(sess.Tools)
	}
}

// record saves a message of the run, on the session's current line.
func (s *askSession) record(a agent.Appended) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" {
		sess, err := s.store.CreateQueued(s.meta)
		if err != nil {
			s.err = err
			return
		}
		s.id = sess.ID
		// Nobody knows it yet, but a workbench may list and open it
		// while the run still writes. One that cannot be held (a
		// read-only directory) is saved all the same.
		s.lease, _ = s.store.Hold(s.id, "jarvis ask")
	}
	m := s.tree.Append(history.Stored(a))
	if err := s.store.AppendQueued(s.id, m); err != nil && s.err == nil {
		s.err = err
	}
}

// currentID is the session's id ("" until its first message).
func (s *askSession) currentID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// finish records what the session runs with now when the run changed it
// (a flag, or a fallback to react): the model, agent and tools, and the
// window the person set (--num-ctx, or the session's own).
func (s *askSession) finish(model, agentName string, tools []string, numCtx int) {
	if s.id == "" {
		return
	}
	now := sessions.Meta{Model: model, Agent: agentName, Tools: tools, NumCtx: numCtx}
	if now.Model == "" {
		now.Model = s.meta.Model
	}
	if now.Model == s.meta.Model && now.Agent == s.meta.Agent && slices.Equal(now.Tools, s.meta.Tools) && now.NumCtx == s.meta.NumCtx {
		return
	}
	if err := s.store.SetMetaQueued(s.id, now); err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
}

// report says on stderr which session the run was saved to, and any
// write that could not be queued.
func (s *askSession) report(p *askPrinter) {
	s.mu.Lock()
	err, n := s.err, len(s.tree.Messages)
	s.mu.Unlock()
	switch {
	case s.id == "":
		return // nothing was said
	case err != nil:
		p.note("the run could not be saved to session " + s.id + ": " + err.Error())
	case s.isNew:
		p.note(fmt.Sprintf("saved as session %s; go on with: jarvis ask --session %s", s.id, s.id))
	case !s.isNew && p.ttyErr:
		p.note(fmt.Sprintf("session %s “%s” (%s)", s.id, safe.Text(s.title), format.Count(n, "message")))
	}
}
