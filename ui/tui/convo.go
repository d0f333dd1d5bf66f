package tui

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// Conversation control: the session's messages and branches (a
// sessions.Tree kept in memory and written as it changes), asking again
// for an answer (/retry), editing a question (/edit), flipping between
// attempts and versions ([ and ]), forking a session (/fork), and the
// images attached to the next message.
//
// The transcript shows the current line of the tree. Questions and
// answers know their place in it (userItem.seq, assistantItem.after), so
// a branch can be shown from the point where it leaves the line, and the
// conversation the model sees is rebuilt from the line
// (history.Conversation), never patched.

// convoState is the model's part for conversation control.
type convoState struct {
	tree *sessions.Tree
	// images wait for the next message; offer is an image whose path was
	// pasted, waiting for tab.
	images []engine.Image
	offer  *pasteOffer
	// selected is the selected question or answer (nil: none).
	selected item
	// editing is the question being edited in the prompt box.
	editing *userItem
	// draft is what the prompt held when an edit took it over.
	draft string
	// rec records the running turn's messages.
	rec *recorder
	// completing is the input a path completion was asked for.
	completing string
	// meta is the model, agent and tools the session has recorded.
	meta SessionMeta
}

func newConvoState() convoState { return convoState{tree: &sessions.Tree{}} }

// recorder takes the messages a run appends, on the run's goroutine: it
// numbers them after the tree's, on the tree's current branch, and
// queues them for the session (creating it with the first one). The
// model adds them to its tree when the run is over.
type recorder struct {
	store SessionStore
	send  func(tea.Msg)
	runID string
	meta  SessionMeta
	base  int
	// branch is where the run's messages go.
	branch string

	mu        sync.Mutex
	sessionID string
	msgs      []sessions.Message
	saveOnce  sync.Once
}

func (r *recorder) record(a agent.Appended) {
	m := history.Stored(a)
	r.mu.Lock()
	m.Seq, m.Branch = r.base+len(r.msgs)+1, r.branch
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	if r.store == nil {
		return
	}
	id := r.session()
	if id == "" {
		var err error
		if id, err = r.store.Create(r.meta); err != nil {
			r.saveOnce.Do(func() { r.send(noticeMsg{text: "This session is not being saved: " + explain(err), isErr: true}) })
			return
		}
		r.mu.Lock()
		r.sessionID = id
		r.mu.Unlock()
		// Held from the start: nobody else can know it yet, but another
		// jarvis may list and open it while this one still writes.
		lease, err := r.store.Hold(id)
		if err != nil {
			r.send(noticeMsg{text: "Another jarvis could open this session while it is open here: " + err.Error(), isErr: true})
		}
		r.send(sessionCreatedMsg{runID: r.runID, id: id, lease: lease})
	}
	if err := r.store.Append(id, m); err != nil {
		r.saveOnce.Do(func() { r.send(noticeMsg{text: "Could not save this session: " + explain(err), isErr: true}) })
	}
}

// session is the run's session id ("" until its first message created
// it); the audit log reads it from the tools' goroutines.
func (r *recorder) session() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessionID
}

// taken returns what the run recorded.
func (r *recorder) taken() []sessions.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

// newRecorder starts recording a run: its question (when it appends
// one) and answer get their places in the tree.
func (m *model) newRecorder(in agent.Input, question *userItem, answer *assistantItem, meta SessionMeta) *recorder {
	base := len(m.convo.tree.Messages)
	if !in.Again {
		question.seq = base + 1
	}
	answer.after = question.seq
	rec := &recorder{store: m.opts.Sessions, send: m.send, runID: m.run.id, meta: meta,
		base: base, branch: m.convo.tree.Current, sessionID: m.sessionID}
	m.convo.rec = rec
	return rec
}

// takeRun adds the finished run's messages to the tree. A run refused
// before it appended anything because the model cannot read images
// leaves no trace but a note saying which models can: its images are
// attached again, and the question is in the prompt's history (↑).
func (m *model) takeRun(msg runDoneMsg) {
	rec := m.convo.rec
	m.convo.rec = nil
	if rec == nil {
		return
	}
	msgs := rec.taken()
	m.convo.tree.Messages = append(m.convo.tree.Messages, msgs...)
	// The run's calls as stored, also those that never ran (a loop
	// stopped) and so sent no events.
	m.toolCalls = countToolCalls(m.convo.tree.Messages)
	var vision *engine.VisionUnsupportedError
	if len(msgs) == 0 && m.run.question != nil && m.run.question.seq > len(m.convo.tree.Messages) {
		switch {
		case errors.As(msg.err, &vision):
			m.giveBack(false)
			m.addNote(explain(msg.err)+". The images stay attached and ↑ recalls the question.", true)
			return
		case msg.result != nil && msg.result.Refused:
			images := len(m.run.question.images)
			m.giveBack(true)
			m.addNote(refusedText(msg.err, images), true)
			return
		}
	}
	m.fillResults(msgs)
	m.refreshMarks()
}

// saveMessage adds a message the workbench itself makes (a /compact's
// summary) to the tree and the session.
func (m *model) saveMessage(a agent.Appended) error {
	stored := m.convo.tree.Append(history.Stored(a))
	if m.opts.Sessions == nil || m.sessionID == "" {
		return nil
	}
	return m.opts.Sessions.Append(m.sessionID, stored)
}

// showTree puts a session's tree in place: the conversation the model
// sees and the transcript of the current line.
func (m *model) showTree(tree *sessions.Tree) {
	m.convo.tree = tree
	m.convo.selected, m.convo.editing = nil, nil
	path := tree.CurrentPath()
	m.conv = history.Conversation(path)
	m.transcript.clear()
	m.run.current, m.lastReply, m.run.question = nil, nil, nil
	items := itemsOf(path, 0)
	for _, it := range items {
		m.transcript.add(it)
	}
	m.lastReply = m.lastAnswer()
	m.toolCalls = countToolCalls(tree.Messages)
	m.refreshMarks()
	m.transcript.bottom()
}

// showFrom redraws the transcript from the point where the current line
// leaves the one shown: from the item at position i on, the line's
// messages after message after. The conversation is rebuilt from the
// line.
func (m *model) showFrom(i, after int) []item {
	path := m.convo.tree.CurrentPath()
	m.conv = history.Conversation(path)
	m.transcript.truncate(i)
	start := slices.IndexFunc(path, func(msg sessions.Message) bool { return msg.Seq > after })
	if start < 0 {
		start = len(path)
	}
	items := itemsOf(path[start:], after)
	for _, it := range items {
		m.transcript.add(it)
	}
	m.run.current, m.run.question = nil, nil
	m.lastReply = m.lastAnswer()
	m.refreshMarks()
	return items
}

// lastAnswer is the last answer in the transcript.
func (m *model) lastAnswer() *assistantItem {
	for i := len(m.transcript.items) - 1; i >= 0; i-- {
		if a, ok := m.transcript.items[i].(*assistantItem); ok {
			return a
		}
	}
	return nil
}

// refreshMarks sets, on every question and answer shown, which of its
// versions or attempts it is, and whether it is selected.
func (m *model) refreshMarks() {
	tree := m.convo.tree
	path := tree.CurrentPath()
	index := make(map[int]int, len(path)) // seq -> position in the path
	for i, msg := range path {
		index[msg.Seq] = i
	}
	forks := tree.Forks()
	which := func(after int) (int, int) {
		alts := forks[after]
		for i, a := range alts {
			if _, on := index[a.First]; on {
				return i + 1, len(alts)
			}
		}
		return 0, 0
	}
	for _, it := range m.transcript.items {
		switch it := it.(type) {
		case *userItem:
			k := msgMark{selected: it == m.convo.selected}
			if i, ok := index[it.seq]; ok && it.seq > 0 {
				prev := 0
				if i > 0 {
					prev = path[i-1].Seq
				}
				k.index, k.count = which(prev)
			}
			if k != it.mark {
				it.mark = k
				it.version++
			}
		case *assistantItem:
			k := msgMark{selected: it == m.convo.selected}
			if i, ok := index[it.after]; ok && it.after > 0 && i+1 < len(path) && !history.IsQuestion(path[i+1]) {
				k.index, k.count = which(it.after)
			}
			if k != it.mark {
				it.mark = k
				m.transcript.invalidate(it)
			}
		}
	}
}

// busyReason says why conversation control cannot act now ("" when it
// can); what names the action ("ask again").
func (m *model) busyReason(what string) string {
	switch {
	case m.run.active:
		return "A turn is running: " + what + " when it is done (esc cancels it)."
	case m.compacting:
		return "The conversation is being compacted: " + what + " when it is done."
	}
	return ""
}

// recordBranch writes a branch made in the tree to the session.
func (m *model) recordBranch(b sessions.Branch) {
	if !m.sessionWritable() {
		return
	}
	if err := m.opts.Sessions.Branch(m.sessionID, b); err != nil {
		m.addNote("The new branch could not be saved: "+explain(err), true)
	}
}

// answerToRetry is the answer /retry (or r) asks again for: the
// selected one, else the last.
func (m *model) answerToRetry() (*assistantItem, *userItem) {
	a, _ := m.convo.selected.(*assistantItem)
	if a == nil {
		m.redrawIfCleared()
		a = m.lastAnswer()
	}
	if a == nil || a.after == 0 {
		return nil, nil
	}
	q := m.questionItem(a.after)
	return a, q
}

// redrawIfCleared draws the current line again when /clear emptied the
// screen, so that what acts on the last question or answer finds it.
func (m *model) redrawIfCleared() {
	for _, it := range m.transcript.items {
		if selectable(it) {
			return
		}
	}
	if len(m.convo.tree.Messages) == 0 {
		return
	}
	items := itemsOf(m.convo.tree.CurrentPath(), 0)
	for _, it := range items {
		m.transcript.add(it)
	}
	m.lastReply = m.lastAnswer()
	m.refreshMarks()
}

// needModel says so and returns false when no model is set: asking again
// would change the session's line for nothing.
func (m *model) needModel() bool {
	if m.modelName == "" {
		m.addNote("No model is set, so nothing was sent. Pick one with /model NAME (tab completes the server's models).", true)
		return false
	}
	return true
}

// questionItem is the shown question with sequence number seq.
func (m *model) questionItem(seq int) *userItem {
	for i := len(m.transcript.items) - 1; i >= 0; i-- {
		if u, ok := m.transcript.items[i].(*userItem); ok && u.seq == seq {
			return u
		}
	}
	return nil
}

// retry asks again for an answer. The old answer, with its tool calls
// and results, leaves what the model sees and stays as an earlier
// attempt ([ and ] flip back to it); the new one goes on a branch that
// leaves the line after the question. An answer that never came (an
// error, a cancel) is simply asked for again.
func (m *model) retry() tea.Cmd {
	if why := m.busyReason("ask again"); why != "" {
		m.addNote(why, true)
		return nil
	}
	if note := m.heldNote("asked again"); note != "" {
		m.addNote(note, true)
		return nil
	}
	if !m.needModel() {
		return nil
	}
	a, q := m.answerToRetry()
	if q == nil {
		m.addNote("There is no answer to ask again for yet: send a question first.", true)
		return nil
	}
	tree := m.convo.tree
	path := tree.CurrentPath()
	at := slices.IndexFunc(path, func(msg sessions.Message) bool { return msg.Seq == q.seq })
	if at < 0 {
		m.addNote("That answer is not on the line shown; select it again.", true)
		return nil
	}
	if at < len(path)-1 {
		m.recordBranch(tree.Branch(q.seq, sessions.ReasonRetry, m.now()))
	}
	m.convo.selected = nil
	i := m.transcript.indexOf(q)
	if ai := m.transcript.indexOf(a); ai > i {
		i = ai
	} else {
		i++
	}
	m.showFrom(i, q.seq)
	return m.startTurn(agent.Input{Again: true}, q)
}

// flip shows another attempt of an answer or version of a question: the
// selected one's, else the last answer's. dir is -1 for the earlier one,
// +1 for the later.
func (m *model) flip(dir int) tea.Cmd {
	if why := m.busyReason("flip between attempts"); why != "" {
		return m.setStatus(why)
	}
	target := m.convo.selected
	if target == nil {
		m.redrawIfCleared()
		if a := m.lastAnswer(); a != nil {
			target = a
		}
	}
	after, ok := m.forkPoint(target)
	if !ok {
		return m.setStatus("nothing to flip: select a question or an answer (alt+↑)")
	}
	tree := m.convo.tree
	alts := tree.Alternatives(after)
	path := tree.CurrentPath()
	cur := -1
	for i, alt := range alts {
		if slices.ContainsFunc(path, func(msg sessions.Message) bool { return msg.Seq == alt.First }) {
			cur = i
		}
	}
	what := "attempt"
	if _, q := target.(*userItem); q {
		what = "version"
	}
	next := cur + dir
	if cur < 0 && len(alts) > 0 {
		// The line shown has nothing here yet (an attempt that failed
		// before any reply): either key shows the nearest one.
		next = map[bool]int{true: len(alts) - 1, false: 0}[dir < 0]
		cur = len(alts)
	}
	switch {
	case len(alts) < 2 && cur < len(alts):
		return m.setStatus("this has no other " + what + " (r or /retry asks again; e or /edit edits a question)")
	case next < 0:
		return m.setStatus("this is the first " + what)
	case next >= len(alts):
		return m.setStatus("this is the latest " + what)
	}
	tree.Current = tree.Latest(alts[next].First)
	if m.sessionWritable() {
		if err := m.opts.Sessions.SetBranch(m.sessionID, tree.Current); err != nil {
			m.addNote("Could not save which attempt is shown: "+explain(err), true)
		}
	}
	i := m.transcript.indexOf(target)
	selected := m.convo.selected != nil
	items := m.showFrom(i, after)
	if len(items) > 0 {
		if selected {
			m.convo.selected = items[0]
			m.refreshMarks()
		}
		m.transcript.reveal(m.renderCtx(m.transcriptWidth()), m.transcript.indexOf(items[0]))
	}
	return m.setStatus(fmt.Sprintf("%s %d of %d", what, next+1, len(alts)))
}

// forkPoint is the message after which the alternatives of a shown
// question or answer start.
func (m *model) forkPoint(it item) (int, bool) {
	switch it := it.(type) {
	case *assistantItem:
		return it.after, it.after > 0
	case *userItem:
		if it.seq == 0 {
			return 0, false
		}
		prev := 0
		for _, msg := range m.convo.tree.CurrentPath() {
			if msg.Seq == it.seq {
				return prev, true
			}
			prev = msg.Seq
		}
	}
	return 0, false
}

// editTarget is the question /edit (or e) edits: the selected question,
// the question of the selected answer, else the last question.
func (m *model) editTarget() *userItem {
	switch it := m.convo.selected.(type) {
	case *userItem:
		return it
	case *assistantItem:
		return m.questionItem(it.after)
	}
	m.redrawIfCleared()
	for i := len(m.transcript.items) - 1; i >= 0; i-- {
		if u, ok := m.transcript.items[i].(*userItem); ok && u.seq > 0 {
			return u
		}
	}
	return nil
}

// askEdited sends text as the new version of question q. The edited
// question and what follows go on a branch that leaves the line before
// q; what came after q leaves what the model sees and stays in the
// session. q's images go with the new version.
func (m *model) askEdited(q *userItem, text string) tea.Cmd {
	if why := m.busyReason("edit"); why != "" {
		m.addNote(why, true)
		return nil
	}
	if note := m.heldNote("asked"); note != "" {
		m.addNote(note, true)
		return nil
	}
	if !m.needModel() {
		return nil
	}
	prev, ok := m.forkPoint(q)
	if !ok || m.transcript.indexOf(q) < 0 {
		m.addNote("That question is no longer shown; select it again to edit it.", true)
		return nil
	}
	m.recordBranch(m.convo.tree.Branch(prev, sessions.ReasonEdit, m.now()))
	m.convo.selected, m.convo.editing = nil, nil
	m.showFrom(m.transcript.indexOf(q), prev)
	return m.startTurn(agent.Input{Text: text, Images: slices.Clone(q.images)}, nil)
}
