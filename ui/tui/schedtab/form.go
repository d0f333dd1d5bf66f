package schedtab

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// formField is one field of the create-task form, in tab order.
type formField int

const (
	fPrompt formField = iota
	fType
	fValue
	fZone
	fAgent
	fTools
	fApprove
	fTimeout
	fieldCount
)

var fieldLabels = [fieldCount]string{"Prompt", "Schedule", "Value", "Time zone", "Agent", "Tools", "Approve", "Time limit"}

// choice fields cycle through fixed options instead of taking text.
func (f formField) choice() bool { return f == fType || f == fAgent }

// previewRuns is how many run times the form previews.
const previewRuns = 5

// formAction is what a key in the form asks the tab to do.
type formAction int

const (
	formStay formAction = iota
	formSubmit
	formClose
)

// taskForm is the create-task modal. It checks the task on every key the
// way creating it would (scheduler.Explain for the schedule, the
// validate func for the agent and tools), so the person sees what is wrong
// under the field they are typing in, and the schedule in words with its
// next run times, before anything is stored.
type taskForm struct {
	inputs [fieldCount]textinput.Model // text fields only
	typ    int                         // index into tasks.ScheduleTypes
	agent  int                         // index into agent.Names
	// values keeps what was typed for each schedule type, so trying
	// another type and coming back does not lose it.
	values [3]string
	focus  formField

	// agentSet is true once the person chose an agent; until then the
	// agent follows the tools (simple without, orchestrator with).
	agentSet bool
	touched  [fieldCount]bool
	tried    bool // a submit was attempted: show every error
	errs     [fieldCount]string
	// warns are shown under a field without blocking the submit.
	warns   [fieldCount]string
	words   string
	preview []time.Time
	valid   bool

	busy    bool   // Create is in flight
	failure string // Create's error, when it refused the task

	validate  func(agent string, tools []string) error
	toolNames func() []string
	// limit is the time limit of a task that sets none.
	limit  time.Duration
	fieldW int
}

func newTaskForm(validate func(string, []string) error, toolNames func() []string, limit time.Duration, now time.Time) *taskForm {
	f := &taskForm{validate: validate, toolNames: toolNames, limit: limit}
	for i := range f.inputs {
		if formField(i).choice() {
			continue
		}
		in := textinput.New()
		in.Prompt = ""
		// A blinking cursor would wake the program twice a second; an
		// idle form must cost nothing.
		in.Cursor.SetMode(cursor.CursorStatic)
		in.CharLimit = 4000
		f.inputs[i] = in
	}
	f.inputs[fPrompt].Placeholder = "what the agent should do"
	f.inputs[fZone].SetValue(tasks.LocalZoneName())
	f.inputs[fTools].Placeholder = "comma-separated, e.g. calculator, file_read"
	f.inputs[fApprove].Placeholder = "tools allowed without confirmation"
	f.inputs[fTimeout].Placeholder = "default: " + tasks.FormatDuration(limit)
	f.typ = slices.Index(tasks.ScheduleTypes, tasks.Interval)
	f.values[f.typ] = "1h"
	f.inputs[fValue].SetValue("1h")
	f.setPlaceholder(now)
	f.inputs[fPrompt].Focus()
	f.check(now)
	return f
}

func (f *taskForm) schedType() tasks.ScheduleType { return tasks.ScheduleTypes[f.typ] }

// agentName is the agent the task gets: the one chosen, else the default
// for its tools.
func (f *taskForm) agentName() string {
	if f.agentSet {
		return agent.Names[f.agent]
	}
	return tasks.AgentFor("", splitList(f.inputs[fTools].Value()))
}

// timeout reads the Time limit field; empty means the default (0).
func (f *taskForm) timeout() (time.Duration, error) {
	v := strings.TrimSpace(f.inputs[fTimeout].Value())
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write 5m, 1h or 90s, or leave it empty for the default", v)
	}
	return d, tasks.CheckTimeout(d)
}

// setPlaceholder shows an example value for the schedule type.
func (f *taskForm) setPlaceholder(now time.Time) {
	switch f.schedType() {
	case tasks.Cron:
		f.inputs[fValue].Placeholder = "0 9 * * 1-5"
	case tasks.Interval:
		f.inputs[fValue].Placeholder = "3600 or 1h30m"
	case tasks.Once:
		f.inputs[fValue].Placeholder = tomorrowAt9(now)
	}
}

func tomorrowAt9(now time.Time) string {
	d := now.AddDate(0, 0, 1)
	return time.Date(d.Year(), d.Month(), d.Day(), 9, 0, 0, 0, now.Location()).Format("2006-01-02T15:04")
}

// valueHint says what the value field takes for a schedule type.
func valueHint(typ tasks.ScheduleType, now time.Time) string {
	switch typ {
	case tasks.Cron:
		return "minute hour day-of-month month day-of-week (0 9 * * 1-5), or @hourly @daily @weekly @monthly @yearly"
	case tasks.Interval:
		return "seconds (3600) or a duration of whole seconds (90s, 1h30m), at least 1s; the first run is one interval from now"
	}
	return "a future date and time: " + tomorrowAt9(now) + " (in the time zone below) or with an offset (2025-06-01T09:00:00+02:00)"
}

// splitList reads a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// newTask is the task the form describes.
func (f *taskForm) newTask() scheduler.NewTask {
	timeout, _ := f.timeout()
	return scheduler.NewTask{
		Prompt:        strings.TrimSpace(f.inputs[fPrompt].Value()),
		ScheduleType:  f.schedType(),
		ScheduleValue: strings.TrimSpace(f.inputs[fValue].Value()),
		TimeZone:      strings.TrimSpace(f.inputs[fZone].Value()),
		Agent:         f.agentName(),
		Timeout:       timeout,
		Tools:         splitList(f.inputs[fTools].Value()),
		ApprovedTools: splitList(f.inputs[fApprove].Value()),
	}
}

// check validates every field as creating the task would, field by field,
// and computes the schedule preview.
func (f *taskForm) check(now time.Time) {
	f.errs, f.warns = [fieldCount]string{}, [fieldCount]string{}
	f.words, f.preview = "", nil
	nt := f.newTask()
	if nt.Prompt == "" {
		f.errs[fPrompt] = "the prompt is empty: say what the task should do"
	}
	if _, _, err := tasks.LoadZone(nt.TimeZone); err != nil {
		f.errs[fZone] = err.Error()
	} else if words, runs, err := scheduler.Explain(nt.ScheduleType, nt.ScheduleValue, nt.TimeZone, now, previewRuns); err != nil {
		f.errs[fValue] = err.Error()
	} else {
		f.words, f.preview = words, runs
	}
	if f.validate != nil {
		if err := f.validate(nt.Agent, nil); err != nil {
			f.errs[fAgent] = err.Error()
		} else if err := f.validate(nt.Agent, nt.Tools); err != nil {
			f.errs[fTools] = err.Error()
		}
	}
	for _, a := range nt.ApprovedTools {
		if !slices.Contains(nt.Tools, a) {
			f.errs[fApprove] = fmt.Sprintf("%q is not one of the task's tools: add it to Tools, or leave it out here", a)
			break
		}
	}
	if _, err := f.timeout(); err != nil {
		f.errs[fTimeout] = err.Error()
	}
	if f.agentSet && nt.Agent == agent.Simple && len(nt.Tools) > 0 {
		f.warns[fAgent] = "the simple agent never calls tools, so Tools will not be used: choose orchestrator or react"
	}
	f.valid = true
	for _, e := range f.errs {
		if e != "" {
			f.valid = false
		}
	}
}

// shownErr is the error to show under a field: a field's error shows once
// the person has typed in it or left it, or tried to create the task, not
// while a fresh form is still empty.
func (f *taskForm) shownErr(field formField) string {
	if f.touched[field] || f.tried {
		return f.errs[field]
	}
	return ""
}

func (f *taskForm) setFocus(field formField) {
	if !f.focus.choice() {
		f.inputs[f.focus].Blur()
	}
	f.touched[f.focus] = true
	f.focus = (field + fieldCount) % fieldCount
	if !f.focus.choice() {
		f.inputs[f.focus].Focus()
	}
}

// cycle moves a choice field to its next or previous option.
func (f *taskForm) cycle(delta int, now time.Time) {
	switch f.focus {
	case fType:
		f.values[f.typ] = f.inputs[fValue].Value()
		f.typ = (f.typ + delta + len(tasks.ScheduleTypes)) % len(tasks.ScheduleTypes)
		f.inputs[fValue].SetValue(f.values[f.typ])
		f.inputs[fValue].CursorEnd()
		f.touched[fValue] = f.values[f.typ] != ""
		f.setPlaceholder(now)
	case fAgent:
		if !f.agentSet {
			// Start from the agent shown, the default for the tools.
			f.agent, f.agentSet = max(slices.Index(agent.Names, f.agentName()), 0), true
		}
		f.agent = (f.agent + delta + len(agent.Names)) % len(agent.Names)
	}
}

// pick selects the option of a choice field whose name starts with r.
func (f *taskForm) pick(r string, now time.Time) {
	var names []string
	switch f.focus {
	case fType:
		for _, t := range tasks.ScheduleTypes {
			names = append(names, string(t))
		}
	case fAgent:
		names = agent.Names
	}
	cur := f.typ
	if f.focus == fAgent {
		cur = max(slices.Index(agent.Names, f.agentName()), 0)
	}
	for i := 1; i <= len(names); i++ {
		j := (cur + i) % len(names)
		if strings.HasPrefix(names[j], strings.ToLower(r)) {
			f.cycle(j-cur, now)
			return
		}
	}
}

// key handles a key while the form is open. The returned command is the
// text input's own (a clipboard paste).
func (f *taskForm) key(k tea.KeyMsg, now time.Time) (formAction, tea.Cmd) {
	if f.busy {
		// Creating: only leaving is possible, so a second ctrl+s cannot
		// create the task twice.
		if s := k.String(); s == "esc" || s == "ctrl+c" {
			return formClose, nil
		}
		return formStay, nil
	}
	switch k.String() {
	case "esc", "ctrl+c":
		return formClose, nil
	case "ctrl+s":
		return f.submit(now), nil
	case "enter":
		if f.focus == fieldCount-1 {
			return f.submit(now), nil
		}
		f.setFocus(f.focus + 1)
		f.check(now)
		return formStay, nil
	case "tab", "down":
		f.setFocus(f.focus + 1)
		f.check(now)
		return formStay, nil
	case "shift+tab", "up":
		f.setFocus(f.focus - 1)
		f.check(now)
		return formStay, nil
	}
	if f.focus.choice() {
		switch k.String() {
		case "right", "l", " ":
			f.cycle(1, now)
		case "left", "h":
			f.cycle(-1, now)
		default:
			if k.Type == tea.KeyRunes && len(k.Runes) == 1 {
				f.pick(string(k.Runes), now)
			}
		}
		f.check(now)
		return formStay, nil
	}
	before := f.inputs[f.focus].Value()
	var cmd tea.Cmd
	f.inputs[f.focus], cmd = f.inputs[f.focus].Update(k)
	if f.inputs[f.focus].Value() != before {
		f.touched[f.focus] = true
		f.failure = ""
	}
	f.check(now)
	return formStay, cmd
}

// input passes one of the text input's own messages (a paste) on.
func (f *taskForm) input(msg tea.Msg, now time.Time) tea.Cmd {
	if f.focus.choice() {
		return nil
	}
	var cmd tea.Cmd
	f.inputs[f.focus], cmd = f.inputs[f.focus].Update(msg)
	f.touched[f.focus] = true
	f.check(now)
	return cmd
}

// submit creates the task if it is valid; otherwise it shows every error
// and puts the cursor on the first wrong field.
func (f *taskForm) submit(now time.Time) formAction {
	f.check(now)
	f.tried = true
	if !f.valid {
		for i, e := range f.errs {
			if e != "" {
				f.setFocus(formField(i))
				break
			}
		}
		return formStay
	}
	f.busy, f.failure = true, ""
	return formSubmit
}

// Form layout: a marker and a label before each field.
const formLabelW = 13

// view draws the form as a bordered box at most width wide and height
// tall. When the screen is short, the preview gives up lines first.
func (f *taskForm) view(st Styles, width, height int, now time.Time) string {
	boxW := min(width-4, 84)
	inner := max(boxW-4, 20)
	fieldW := max(inner-formLabelW, 8)
	if fieldW != f.fieldW {
		// The inputs scroll horizontally within their width; resetting
		// the cursor recomputes that scroll for the new width.
		f.fieldW = fieldW
		for i := range f.inputs {
			if !formField(i).choice() {
				f.inputs[i].Width = fieldW - 1
				f.inputs[i].SetCursor(f.inputs[i].Position())
			}
		}
	}
	indent := strings.Repeat(" ", formLabelW)
	// under writes a hint or an error below a field, wrapped to the
	// field's width and cut to maxLines.
	under := func(text string, style lipgloss.Style, maxLines int) []string {
		ls := termtext.Wrap(text, fieldW)
		if len(ls) > maxLines {
			ls = ls[:maxLines]
			ls[maxLines-1] = ansi.Truncate(ls[maxLines-1], fieldW-1, "") + "…"
		}
		out := make([]string, 0, len(ls))
		for _, l := range ls {
			out = append(out, indent+style.Render(l))
		}
		return out
	}

	// On a short screen the form gives up, in order: preview lines, the
	// blank line under the title, hint lines, then error lines beyond
	// the first.
	var top []string
	for level := 2; level >= 0; level-- {
		top = f.fieldLines(st, under, fieldW, level, now)
		// Room for the borders, a blank line, the footer and the first
		// two lines of the preview.
		if len(top)+len(f.footLines(st, inner))+5 <= height || level == 0 {
			break
		}
	}
	foot := f.footLines(st, inner)

	// The preview takes what is left: the schedule in words, then run
	// times, as many as fit.
	room := height - 2 - len(top) - 1 - len(foot)
	var mid []string
	if room >= 1 {
		if room >= 2 {
			mid = append(mid, "")
			room--
		}
		if f.words != "" {
			mid = append(mid, st.Text.Render(ansi.Truncate("Runs "+f.words, inner, "…")))
			room--
			seconds := shortInterval(f.preview)
			for _, r := range f.preview[:min(len(f.preview), room)] {
				mid = append(mid, "  "+st.Accent.Render(ansi.Truncate(formatRunTime(r, now, seconds)+"  "+scheduler.Relative(r, now), inner-2, "…")))
			}
		} else {
			mid = append(mid, st.Muted.Render(ansi.Truncate("The next runs show here once the schedule is valid.", inner, "…")))
		}
	}
	lines := append(append(append(top, mid...), ""), foot...)
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, inner, "")
	}
	return boxStyle(st, inner).Render(strings.Join(lines, "\n"))
}

// fieldLines draws the title and the fields with their errors and hints;
// level 2 shows everything, 1 shorter errors and only the value's hint, 0
// one line per error and no hints.
func (f *taskForm) fieldLines(st Styles, under func(string, lipgloss.Style, int) []string, fieldW, level int, now time.Time) []string {
	top := []string{st.DialogTitle.Render("New scheduled task")}
	if level == 2 {
		top = append(top, "")
	}
	errLines, hintLines := []int{1, 2, 4}[level], []int{0, 1, 2}[level]
	for i := range fieldCount {
		field := formField(i)
		label := "  " + termtext.PadRight(fieldLabels[field], formLabelW-2)
		if field == f.focus {
			label = st.Accent.Render("› " + termtext.PadRight(fieldLabels[field], formLabelW-2))
		} else {
			label = st.Muted.Render(label)
		}
		top = append(top, label+f.fieldView(st, field, fieldW))
		if e := f.shownErr(field); e != "" {
			top = append(top, under(e, st.Error, errLines)...)
			continue
		}
		if w := f.warns[field]; w != "" {
			top = append(top, under(w, st.Warning, errLines)...)
			continue
		}
		if hintLines == 0 {
			continue
		}
		switch {
		case field == fValue:
			top = append(top, under(valueHint(f.schedType(), now), st.Muted, hintLines)...)
		case level < 2:
		case field == fTools && f.focus == fTools && f.toolNames != nil:
			top = append(top, under("available: "+strings.Join(f.toolNames(), ", "), st.Muted, hintLines)...)
		case field == fApprove && f.focus == fApprove:
			top = append(top, under("tools among Tools that may run without asking; in unattended runs every other tool that needs confirmation is denied", st.Muted, hintLines)...)
		case field == fAgent && f.focus == fAgent && !f.agentSet:
			top = append(top, under("follows Tools until you choose: simple without tools, orchestrator with them", st.Muted, hintLines)...)
		case field == fTimeout && f.focus == fTimeout:
			top = append(top, under("a run still going after this long is stopped and logged as timed out; empty: the default, "+tasks.FormatDuration(f.limit), st.Muted, hintLines)...)
		}
	}
	return top
}

// footLines says whether the task can be created and how.
func (f *taskForm) footLines(st Styles, inner int) []string {
	var foot []string
	switch {
	case f.busy:
		foot = append(foot, st.Accent.Render("creating…"))
	case f.failure != "":
		for _, l := range termtext.Wrap("Not created: "+f.failure, inner) {
			foot = append(foot, st.Error.Render(l))
		}
	}
	keys := "ctrl+s create (or ⏎ on the last field) · tab/shift+tab move · ←/→ change choice · esc cancel"
	if !f.valid {
		keys = "fix the fields marked above to create · tab/shift+tab move · esc cancel"
		if !f.tried && f.errs[fPrompt] != "" && f.nonPromptValid() {
			keys = "type a prompt to create · tab/shift+tab move · esc cancel"
		}
	}
	if ansi.StringWidth(keys) > inner {
		keys = strings.Replace(strings.Replace(keys, "tab/shift+tab move", "tab move", 1), " · ←/→ change choice", "", 1)
		keys = strings.Replace(keys, " (or ⏎ on the last field)", "", 1)
	}
	for _, l := range termtext.Wrap(keys, inner) {
		foot = append(foot, st.Muted.Render(l))
	}
	return foot
}

// nonPromptValid reports whether everything but the prompt is fine, to
// say exactly what is missing on a new form.
func (f *taskForm) nonPromptValid() bool {
	for i, e := range f.errs {
		if formField(i) != fPrompt && e != "" {
			return false
		}
	}
	return true
}

// fieldView draws a field's value: the text input, or the options of a
// choice field with the chosen one in brackets.
func (f *taskForm) fieldView(st Styles, field formField, width int) string {
	var opts []string
	cur := 0
	switch field {
	case fType:
		for _, t := range tasks.ScheduleTypes {
			opts = append(opts, string(t))
		}
		cur = f.typ
	case fAgent:
		opts, cur = agent.Names, max(slices.Index(agent.Names, f.agentName()), 0)
	default:
		in := f.inputs[field]
		in.TextStyle, in.PlaceholderStyle = st.Text, st.Muted
		in.Cursor.Style = st.Accent
		in.Cursor.TextStyle = st.Text
		return ansi.Truncate(in.View(), width, "")
	}
	var parts []string
	for i, o := range opts {
		switch {
		case i == cur && field == f.focus:
			parts = append(parts, st.Selection.Render("["+o+"]"))
		case i == cur:
			parts = append(parts, st.Text.Render("["+o+"]"))
		default:
			parts = append(parts, st.Muted.Render(" "+o+" "))
		}
	}
	return ansi.Truncate(strings.Join(parts, " "), width, "")
}
