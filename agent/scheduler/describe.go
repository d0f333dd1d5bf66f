package scheduler

import (
	"fmt"
	"time"

	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// Explain checks a schedule the way creating a task would (a once time
// must be in the future) and returns it in words with its next n run times
// in the schedule's zone: what a form previews while the person types.
func Explain(typ ScheduleType, value, zone string, from time.Time, n int) (words string, runs []time.Time, err error) {
	sched, err := tasks.ParseSchedule(typ, value, zone)
	if err != nil {
		return "", nil, err
	}
	if _, err := sched.First(from); err != nil {
		return "", nil, err
	}
	return sched.Describe(), sched.Preview(from, n), nil
}

// Relative says how far t is from now, to the precision people read at
// that distance: "in 45s", "in 4m30s", "in 2h10m", "3d4h ago", "now";
// "-" for the zero time. Seconds are dropped beyond ten minutes and
// minutes beyond a day, rounding to the nearest.
func Relative(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := t.Sub(now)
	future := d > 0
	if d < 0 {
		d = -d
	}
	unit := time.Second
	switch {
	case d >= 24*time.Hour:
		unit = time.Hour
	case d >= 10*time.Minute:
		unit = time.Minute
	}
	d = d.Round(unit)
	if d < time.Second {
		return "now"
	}
	secs := int64(d / time.Second)
	var s string
	switch {
	case secs < 60:
		s = fmt.Sprintf("%ds", secs)
	case secs < 3600:
		s = twoUnits(secs/60, "m", secs%60, "s")
	case secs < 86400:
		s = twoUnits(secs/3600, "h", secs%3600/60, "m")
	default:
		s = twoUnits(secs/86400, "d", secs%86400/3600, "h")
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

func twoUnits(a int64, ua string, b int64, ub string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, ua)
	}
	return fmt.Sprintf("%d%s%d%s", a, ua, b, ub)
}
