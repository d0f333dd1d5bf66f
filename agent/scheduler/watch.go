package scheduler

import (
	"fmt"
	"os"
	"time"

	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// track registers a run in progress and makes sure someone watches for
// its task being cancelled or paused elsewhere.
func (s *Scheduler) track(ar *activeRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active[ar.claim.Task.ID] = ar
	if !s.watchingRun {
		s.watchingRun = true
		go s.watchRuns()
	}
}

// watchRuns runs while this process has runs in progress (scheduled ones
// and RunNow alike). Every WatchInterval it stats the database file; when
// the file changed, it reads the status of the running tasks and stops the
// runs of those cancelled or paused since they started, so `jarvis
// scheduler cancel` in another shell reaches a run within about a second.
// An unchanged file costs one stat per interval; the statuses are also
// read every recheckRuns regardless, in case two writes fell within one
// tick of the file system's clock and looked like none.
func (s *Scheduler) watchRuns() {
	w := &fileWatch{path: s.store.DB().Path()} // the first tick checks
	ticker := time.NewTicker(s.opts.WatchInterval)
	defer ticker.Stop()
	var checked time.Time
	for range ticker.C {
		s.mu.Lock()
		if len(s.active) == 0 {
			s.watchingRun = false
			s.mu.Unlock()
			return
		}
		runs := make([]*activeRun, 0, len(s.active))
		ids := make([]string, 0, len(s.active))
		for id, ar := range s.active {
			runs = append(runs, ar)
			ids = append(ids, id)
		}
		s.mu.Unlock()
		if !w.changed() && time.Since(checked) < recheckRuns {
			continue
		}
		checked = time.Now()
		statuses, err := s.store.Statuses(ids)
		if err != nil {
			// Held by another process: look again at the next tick.
			w.forget()
			continue
		}
		for _, ar := range runs {
			switch st := statuses[ar.claim.Task.ID]; {
			case st == tasks.Cancelled && ar.claim.Task.Status != tasks.Cancelled:
				ar.stop(stopCancelled)
			case st == tasks.Paused && ar.claim.Task.Status != tasks.Paused:
				ar.stop(stopPaused)
			}
		}
	}
}

// recheckRuns is the longest a cancel can go unnoticed if its write was
// missed by the file watch. Reading less often than store.IdleRelease lets
// other processes have the file between reads.
const recheckRuns = 5 * time.Second

// fileWatch notices writes to the database file by other processes
// without opening it: bbolt changes the file's size or modification time on
// every commit, and reads change neither.
type fileWatch struct {
	path string
	mod  time.Time
	size int64
}

func newFileWatch(path string) *fileWatch {
	w := &fileWatch{path: path}
	w.changed()
	return w
}

func (w *fileWatch) changed() bool {
	st, err := os.Stat(w.path)
	if err != nil {
		return false
	}
	if st.ModTime().Equal(w.mod) && st.Size() == w.size {
		return false
	}
	w.mod, w.size = st.ModTime(), st.Size()
	return true
}

// forget makes the next changed report a change.
func (w *fileWatch) forget() { w.mod, w.size = time.Time{}, 0 }

// panicError is a panic in a callback, as an error.
type panicError struct{ v any }

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.v) }
