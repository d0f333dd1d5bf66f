package schedtab

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// clockAt matches a run time's clock in the form's preview and the
// details: HH:MM, or HH:MM:SS.
var clockAt = regexp.MustCompile(`\b\d{2}:\d{2}(:\d{2})? [A-Z]{3,4}\b`)

// A task that runs every few seconds previews its runs with seconds
// (five runs at one minute would read as one); an hourly one does not.
func TestShortIntervalsShowSeconds(t *testing.T) {
	d := newSchedDriver(t, nil)
	d.press("n")
	d.typeText("ping")
	d.press("tab", "i", "tab", "ctrl+u") // schedule type: interval, then its value
	d.typeText("10s")
	form := d.modal(100, 40)
	mustContain(t, form, "Runs every 10s")
	clocks := clockAt.FindAllStringSubmatch(form, -1)
	if len(clocks) != 5 {
		t.Fatalf("want 5 run times in the preview, got %d:\n%s", len(clocks), form)
	}
	seen := map[string]bool{}
	for _, c := range clocks {
		if c[1] == "" {
			t.Errorf("a run every 10s is previewed without its seconds: %q", c[0])
		}
		seen[c[0]] = true
	}
	if len(seen) != 5 {
		t.Errorf("the five runs read as %d times:\n%s", len(seen), form)
	}

	d.press("ctrl+u")
	d.typeText("1h")
	form = d.modal(100, 40)
	for _, c := range clockAt.FindAllStringSubmatch(form, -1) {
		if c[1] != "" {
			t.Errorf("an hourly run is previewed with seconds: %q", c[0])
		}
	}
}

// A task's details say which model it runs, on a line of its own, and
// when it names none, which one each run takes.
func TestTaskDetailsShowTheModel(t *testing.T) {
	d := newSchedDriver(t, nil)
	d.create(scheduler.NewTask{Prompt: "summarise the news", ScheduleType: tasks.Interval, ScheduleValue: "30s"})
	s := d.screen(100, 40)
	mustContain(t, s, "Model    qwen3:8b", "Server   ollama http://127.0.0.1:11434\n")
	if next := regexp.MustCompile(`Next +\S+ \d+ \S+ (\d{2}:\d{2}:\d{2})`).FindStringSubmatch(s); next == nil {
		t.Errorf("the next runs, 30s apart, are not shown with seconds:\n%s", s)
	}

	d2 := newSchedDriver(t, nil)
	d2.create(scheduler.NewTask{Prompt: "any model will do", ScheduleType: tasks.Interval, ScheduleValue: "1h",
		Server: tasks.Server{Engine: "ollama", Host: "http://gpu:11434"}})
	s = d2.screen(100, 40)
	mustContain(t, s, "Server   ollama http://gpu:11434", "Model    none named: each run takes the server's first model")
	if strings.Contains(s, "· qwen3:8b") {
		t.Errorf("the details name a model the task does not have:\n%s", s)
	}
}
