package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/tools"
)

// The end of a run that finishes while another process holds the database
// is not lost: it waits in the write queue and lands when the file is
// free, and the run's end is reported meanwhile.
func TestARunsEndWaitsForABusyDatabase(t *testing.T) {
	ctx := context.Background()
	r := &fakeRunner{}
	s, rec := newScheduler(t, r, Options{})
	db := s.Store().DB()
	db.SetTimeout(300 * time.Millisecond)
	task, err := s.Create(ctx, NewTask{Prompt: "p", ScheduleType: "interval", ScheduleValue: "3600"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := store.New(db.Path(), "memory index")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var release func()
	r.fn = func(context.Context, Task, tools.Confirmer) (string, error) {
		// Another process takes the file while the run works.
		rel, err := other.Hold()
		if err != nil {
			return "", err
		}
		release = rel
		return "the answer", nil
	}
	run, err := s.RunNow(ctx, task.ID)
	if err != nil || !run.Success || run.Result != "the answer" {
		t.Fatalf("run: %+v %v", run, err)
	}
	if rec.Types()[len(rec.Types())-1] != "scheduler_task_end" {
		t.Fatalf("the run's end was not reported: %v", rec.Types())
	}
	if st := db.Queue().State(); st.Pending != 1 {
		t.Fatalf("queue state %+v, want the run's end pending", st)
	}
	release()
	other.Close()
	flush, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.Flush(flush); err != nil {
		t.Fatal(err)
	}
	runs := finishedRuns(t, s, task.ID)
	if len(runs) != 1 || runs[0].Result != "the answer" {
		t.Fatalf("logged runs: %+v", runs)
	}
	if got, _ := s.Get(ctx, task.ID); got.Running {
		t.Fatal("the task is still marked running after its end landed")
	}
}
