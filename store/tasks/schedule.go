package tasks

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // a task's zone must load on systems without a zoneinfo database

	"github.com/robfig/cron/v3"
)

// ScheduleType says how a task's run times are computed.
type ScheduleType string

// Schedule types.
const (
	Cron     ScheduleType = "cron"
	Interval ScheduleType = "interval"
	Once     ScheduleType = "once"
)

// ScheduleTypes lists the types in the order help texts show them.
var ScheduleTypes = []ScheduleType{Cron, Interval, Once}

// Interval bounds. One second is the clock's resolution; ten years keeps
// every computed time far from time.Duration's overflow.
const (
	MinInterval = time.Second
	MaxInterval = 10 * 365 * 24 * time.Hour
)

// Schedule is a parsed, validated schedule in a time zone. The zero value is
// not usable; build one with ParseSchedule.
type Schedule struct {
	Type ScheduleType
	// Value is the canonical form of the value: interval values are whole
	// seconds ("5400" for "1h30m"), once values RFC 3339 with the offset,
	// cron expressions as given with runs of spaces collapsed.
	Value string
	// Zone is the IANA name the schedule is evaluated in.
	Zone string

	loc   *time.Location
	every time.Duration
	at    time.Time
	spec  *cron.SpecSchedule
}

// ParseSchedule checks a schedule and returns it ready to compute run times.
// zone is an IANA name ("Europe/Paris", "UTC"); "" means the local zone.
// Interval values are whole seconds ("3600") or a Go duration of whole
// seconds ("90s", "1h30m"), at least one second. Once values are RFC 3339
// ("2025-06-01T09:00:00+02:00"); without an offset ("2025-06-01T09:00",
// "2025-06-01 09:00:00") they are read in the zone. Cron values are five
// fields (minute hour day-of-month month day-of-week) or a descriptor such as
// @daily, read by robfig/cron's standard parser.
//
// ParseSchedule does not check that a once time is in the future: that
// depends on when the task is created, see Schedule.First.
func ParseSchedule(typ ScheduleType, value, zone string) (Schedule, error) {
	loc, zoneName, err := LoadZone(zone)
	if err != nil {
		return Schedule{}, err
	}
	s := Schedule{Type: typ, Zone: zoneName, loc: loc}
	value = strings.TrimSpace(value)
	if value == "" && typ != "" {
		return Schedule{}, fmt.Errorf("the schedule value is empty: give %s", valueHint(typ))
	}
	switch typ {
	case Interval:
		s.every, err = parseInterval(value)
		s.Value = strconv.FormatInt(int64(s.every/time.Second), 10)
	case Once:
		s.at, err = parseOnce(value, loc)
		s.Value = s.at.Format(time.RFC3339Nano)
	case Cron:
		s.spec, s.Value, err = parseCron(value)
	default:
		err = fmt.Errorf("unknown schedule type %q: use cron, interval or once", typ)
	}
	if err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// ParseScheduleAt is ParseSchedule for a new task created at now: a once
// value may also be relative to now, "+DURATION" or "in DURATION" ("+2h",
// "in 1d12h", "+90m"), which becomes the absolute time it names.
func ParseScheduleAt(typ ScheduleType, value, zone string, now time.Time) (Schedule, error) {
	if typ == Once {
		if d, ok, err := parseRelative(value); err != nil {
			return Schedule{}, err
		} else if ok {
			value = now.Add(d).Truncate(time.Second).UTC().Format(time.RFC3339)
		}
	}
	return ParseSchedule(typ, value, zone)
}

// parseRelative reads "+DURATION" or "in DURATION"; ok is false for any
// other form. DURATION is a Go duration that may start with days ("1d6h").
func parseRelative(v string) (d time.Duration, ok bool, err error) {
	v = strings.TrimSpace(v)
	rest, plus := strings.CutPrefix(v, "+")
	if !plus {
		var in bool
		if rest, in = strings.CutPrefix(strings.ToLower(v), "in "); !in {
			return 0, false, nil
		}
	}
	rest = strings.ReplaceAll(strings.TrimSpace(rest), " ", "")
	days := int64(0)
	if i := strings.IndexByte(rest, 'd'); i > 0 {
		n, perr := strconv.ParseInt(rest[:i], 10, 64)
		if perr == nil && n <= 3650 {
			days, rest = n, rest[i+1:]
		}
	}
	if rest != "" {
		d, err = time.ParseDuration(rest)
		if err != nil {
			return 0, true, fmt.Errorf("the time %q is not a relative time: write +2h, +90m, +1d6h or \"in 2h\"", v)
		}
	}
	d += time.Duration(days) * 24 * time.Hour
	if d <= 0 {
		return 0, true, fmt.Errorf("the relative time %q must be in the future: write +2h, +90m or \"in 1d\"", v)
	}
	return d, true, nil
}

func valueHint(typ ScheduleType) string {
	switch typ {
	case Interval:
		return `a number of seconds such as "3600" or a duration such as "1h30m"`
	case Once:
		return `a date and time such as "2030-06-01T09:00:00+02:00", or a time from now such as "+2h"`
	case Cron:
		return `a cron expression such as "0 9 * * 1-5"`
	}
	return "a value"
}

// Location returns the zone the schedule is evaluated in.
func (s Schedule) Location() *time.Location { return s.loc }

// First returns a new task's first run: the once time (which must be after
// now), one interval after now, or the first cron match after now.
func (s Schedule) First(now time.Time) (time.Time, error) {
	switch s.Type {
	case Once:
		if !s.at.After(now) {
			return time.Time{}, fmt.Errorf("the time %s has already passed (it is now %s): a one-time task needs a time in the future",
				s.at.In(s.loc).Format(displayLayout), now.In(s.loc).Format(displayLayout))
		}
		return s.at, nil
	case Interval:
		return ceilSecond(now).Add(s.every), nil
	}
	next := s.cronNext(now)
	if next.IsZero() {
		return time.Time{}, fmt.Errorf("the cron expression %q never matches a date in the next five years (such as February 30)", s.Value)
	}
	return next, nil
}

// After returns the run that follows the slot claimed at now, or the zero
// time when there is none (a once task). Slots missed while nothing ran
// collapse into the one being claimed: the result is always after now.
// Interval tasks stay on their original grid (slot + k*interval) so that
// a late run does not shift every later one.
func (s Schedule) After(slot, now time.Time) time.Time {
	switch s.Type {
	case Once:
		return time.Time{}
	case Interval:
		if slot.IsZero() || slot.After(now) {
			return ceilSecond(now).Add(s.every)
		}
		k := now.Sub(slot)/s.every + 1
		return slot.Add(k * s.every)
	}
	return s.cronNext(now)
}

// ceilSecond rounds t up to a whole second, so interval runs fall on whole
// seconds and the first comes a full interval after creation.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); r.Before(t) {
		return r.Add(time.Second)
	}
	return t
}

// Next returns the first run strictly after t, or the zero time when there
// is none. It is what a preview shows; the scheduler uses First and After.
func (s Schedule) Next(t time.Time) time.Time {
	switch s.Type {
	case Once:
		if s.at.After(t) {
			return s.at
		}
		return time.Time{}
	case Interval:
		return t.Add(s.every)
	}
	return s.cronNext(t)
}

// Preview returns up to n run times after from, for a form that shows what a
// schedule means before it is saved. It is empty for a once time that has
// passed.
func (s Schedule) Preview(from time.Time, n int) []time.Time {
	var out []time.Time
	next, err := s.First(from)
	for err == nil && !next.IsZero() && len(out) < n {
		out = append(out, next.In(s.loc))
		next = s.Next(next)
	}
	return out
}

// displayLayout is how run times are shown to people.
const displayLayout = "2006-01-02 15:04:05 MST"

// Describe puts the schedule in words: "every 1h30m",
// "cron 0 9 * * 1-5 (Europe/Paris)", "once at 2025-06-01 09:00 CEST".
func (s Schedule) Describe() string {
	switch s.Type {
	case Interval:
		return "every " + FormatDuration(s.every)
	case Once:
		return "once at " + s.at.In(s.loc).Format("2006-01-02 15:04 MST")
	}
	return fmt.Sprintf("cron %s (%s)", s.Value, s.Zone)
}

// FormatDuration writes a duration compactly in days, hours, minutes and
// seconds, leaving out zero units: 1d, 1h30m, 1m30s, 45s.
func FormatDuration(d time.Duration) string {
	if d < time.Second {
		return d.String()
	}
	secs := int64(d / time.Second)
	var b strings.Builder
	for _, u := range []struct {
		n    int64
		name string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}} {
		if q := secs / u.n; q > 0 {
			fmt.Fprintf(&b, "%d%s", q, u.name)
			secs -= q * u.n
		}
	}
	return b.String()
}

func parseInterval(v string) (time.Duration, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 1 {
			return 0, fmt.Errorf("the interval must be at least 1 second, got %d", n)
		}
		if n > int64(MaxInterval/time.Second) {
			return 0, fmt.Errorf("the interval %d seconds is longer than the maximum of ten years", n)
		}
		return time.Duration(n) * time.Second, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 1 {
			return 0, fmt.Errorf("the interval must be at least 1 second, got %s", v)
		}
		return 0, fmt.Errorf("the interval must be a whole number of seconds, got %s", v)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("the interval %q is neither a number of seconds (3600) nor a duration (90s, 1h30m)", v)
	}
	switch {
	case d < MinInterval:
		return 0, fmt.Errorf("the interval must be at least 1 second, got %s", v)
	case d%time.Second != 0:
		return 0, fmt.Errorf("the interval must be a whole number of seconds, got %s", v)
	case d > MaxInterval:
		return 0, fmt.Errorf("the interval %s is longer than the maximum of ten years", v)
	}
	return d, nil
}

// zonedLayouts are the accepted once formats that carry an offset; the
// local layouts are read in the task's zone.
var (
	zonedLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04Z07:00"}
	localLayouts = []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04:05.999999999", "2006-01-02 15:04"}
)

func parseOnce(v string, loc *time.Location) (time.Time, error) {
	for _, layout := range zonedLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	for _, layout := range localLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return WallTime(t, loc), nil
		}
	}
	return time.Time{}, fmt.Errorf("the time %q is not an ISO 8601 date and time: use 2030-06-01T09:00:00+02:00, 2030-06-01T09:00 for the task's time zone, or a time from now such as +2h", v)
}

// cronFields names the five fields, for error messages.
var cronFields = []struct{ name, values string }{
	{"minute", "0-59"},
	{"hour", "0-23"},
	{"day-of-month", "1-31"},
	{"month", "1-12 or jan-dec"},
	{"day-of-week", "0-6 or sun-sat, 0 is Sunday"},
}

var descriptors = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

// parseCron parses with robfig/cron's standard parser and, when the
// expression is wrong, reparses field by field so the message can say which
// field is wrong and why.
func parseCron(v string) (*cron.SpecSchedule, string, error) {
	fields := strings.Fields(v)
	canonical := strings.Join(fields, " ")
	switch {
	case strings.HasPrefix(canonical, "TZ=") || strings.HasPrefix(canonical, "CRON_TZ="):
		return nil, "", fmt.Errorf("invalid cron expression %q: set the time zone with the task's time zone, not inside the expression", v)
	case strings.HasPrefix(canonical, "@every"):
		return nil, "", fmt.Errorf("invalid cron expression %q: for a fixed delay use the interval schedule type", v)
	case strings.HasPrefix(canonical, "@"):
		if len(fields) != 1 || !slices.Contains(descriptors, strings.ToLower(canonical)) {
			return nil, "", fmt.Errorf("invalid cron expression %q: unknown descriptor; use one of %s or five fields", v, strings.Join(descriptors, ", "))
		}
		canonical = strings.ToLower(canonical)
	case len(fields) != len(cronFields):
		extra := ""
		if len(fields) == 6 {
			extra = " (a seconds field is not supported)"
		}
		return nil, "", fmt.Errorf("invalid cron expression %q: expected 5 fields (minute hour day-of-month month day-of-week), found %d%s", v, len(fields), extra)
	}
	sched, err := cron.ParseStandard(canonical)
	if err != nil {
		return nil, "", fieldError(v, fields, err)
	}
	spec, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, "", fmt.Errorf("invalid cron expression %q: not a calendar schedule", v)
	}
	// Evaluated on a naive wall clock (see cronNext): UTC has no DST.
	utc := *spec
	utc.Location = time.UTC
	return &utc, canonical, nil
}

// fieldError finds the first field that does not parse on its own.
func fieldError(v string, fields []string, whole error) error {
	for i, f := range fields {
		probe := []string{"*", "*", "*", "*", "*"}
		probe[i] = f
		if _, err := cron.ParseStandard(strings.Join(probe, " ")); err != nil {
			msg := err.Error()
			// robfig ends its messages with ": <expr>", which the field
			// quote already says.
			if j := strings.LastIndex(msg, ": "); j > 0 && strings.TrimSpace(msg[j+2:]) != "" && strings.Contains(f, strings.TrimSpace(msg[j+2:])) {
				msg = msg[:j]
			}
			if rest, ok := strings.CutPrefix(msg, "failed to parse int from "); ok {
				word, _, _ := strings.Cut(rest, ":")
				msg = fmt.Sprintf("%q is neither a number nor a known name", word)
			}
			return fmt.Errorf("invalid cron expression %q: the %s field %q is wrong: %s (the %s field takes %s)",
				v, cronFields[i].name, f, msg, cronFields[i].name, cronFields[i].values)
		}
	}
	return fmt.Errorf("invalid cron expression %q: %v", v, whole)
}

// cronNext evaluates the expression on the zone's wall clock: the time t
// shows on a clock in the zone is matched against the fields, and the match
// is turned back into an instant. Doing it this way (rather than matching
// instants, as robfig/cron's SpecSchedule.Next does) gives the behaviour
// people expect at daylight-saving changes:
//
//   - spring forward: a wall time that does not exist (02:30 when clocks
//     jump from 02:00 to 03:00) runs as many minutes after the jump (03:30),
//     so a daily task still runs that day;
//   - fall back: a wall time that happens twice (01:30) runs at its first
//     occurrence only, so a daily task runs once.
func (s Schedule) cronNext(t time.Time) time.Time {
	lt := t.In(s.loc)
	wall := time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), lt.Minute(), lt.Second(), lt.Nanosecond(), time.UTC)
	// A match maps to an instant at or before t only inside repeated wall
	// time (clocks set back: by two hours in some zones, so an every-minute
	// expression may step 120 times); past it every match is after t.
	for range 10_000 {
		wall = s.spec.Next(wall)
		if wall.IsZero() {
			return time.Time{}
		}
		if at := WallTime(wall, s.loc); at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// WallTime returns the instant at which a clock in loc shows the date and
// time of wall (its own zone is ignored). Unlike time.Date, whose choice is
// unspecified for such times, it is deterministic at daylight-saving
// changes: a time that occurs twice gives its first occurrence, and a time
// skipped by a jump forward gives the instant as far after the jump as it
// was after the last valid time (02:30 -> 03:30 for a one-hour jump at 02:00).
func WallTime(wall time.Time, loc *time.Location) time.Time {
	naive := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), time.UTC)
	_, before := naive.Add(-36 * time.Hour).In(loc).Zone()
	_, after := naive.Add(36 * time.Hour).In(loc).Zone()
	var best time.Time
	for _, off := range []int{before, after} {
		at := naive.Add(-time.Duration(off) * time.Second)
		l := at.In(loc)
		if sameWall(l, naive) && (best.IsZero() || at.Before(best)) {
			best = at
		}
	}
	if best.IsZero() {
		// In a gap: keep the distance from the jump, read with the offset
		// in force before it.
		best = naive.Add(-time.Duration(before) * time.Second)
	}
	return best.In(loc)
}

func sameWall(a, b time.Time) bool {
	return a.Year() == b.Year() && a.YearDay() == b.YearDay() && a.Hour() == b.Hour() &&
		a.Minute() == b.Minute() && a.Second() == b.Second()
}

// zones caches loaded locations: time.LoadLocation reads the zone file on
// every call, and the scheduler parses a task's schedule at each claim.
var zones sync.Map

// LoadZone loads an IANA zone; "" or "Local" means the local zone, named by
// LocalZoneName. It returns the location and its canonical name.
func LoadZone(name string) (*time.Location, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || name == "Local" {
		name = LocalZoneName()
	}
	if v, ok := zones.Load(name); ok {
		return v.(*time.Location), name, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, "", fmt.Errorf("unknown time zone %q: use an IANA name such as Europe/Paris, America/New_York or UTC", name)
	}
	zones.Store(name, loc)
	return loc, name, nil
}

// LocalZoneName returns the IANA name of the local zone, so a task created
// "in the local zone" keeps meaning that zone if the machine's setting later
// changes: $TZ, else the target of /etc/localtime, else "Local" (the
// machine's zone, whatever it is at run time).
func LocalZoneName() string {
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		if _, err := time.LoadLocation(tz); err == nil && !filepath.IsAbs(tz) {
			return tz
		}
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			name := target[i+len("zoneinfo/"):]
			if _, err := time.LoadLocation(name); err == nil {
				return name
			}
		}
	}
	return "Local"
}

// clampNanos guards index keys against times outside int64 nanoseconds.
func clampNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	if t.Year() > 2262 {
		return math.MaxInt64
	}
	return t.UnixNano()
}
