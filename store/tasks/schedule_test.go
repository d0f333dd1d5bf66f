package tasks

import (
	"strings"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustSchedule(t *testing.T, typ ScheduleType, value, zone string) Schedule {
	t.Helper()
	s, err := ParseSchedule(typ, value, zone)
	if err != nil {
		t.Fatalf("ParseSchedule(%s, %q, %q): %v", typ, value, zone, err)
	}
	return s
}

func TestParseInterval(t *testing.T) {
	good := map[string]string{"3600": "3600", "1": "1", "90s": "90", "1h30m": "5400", " 45 ": "45", "2h": "7200"}
	for in, want := range good {
		s := mustSchedule(t, Interval, in, "UTC")
		if s.Value != want {
			t.Errorf("interval %q canonical value = %q, want %q", in, s.Value, want)
		}
	}
	bad := map[string]string{
		"0":            "at least 1 second",
		"-5":           "at least 1 second, got -5",
		"-1h":          "at least 1 second",
		"1.5":          "whole number of seconds",
		"500ms":        "at least 1 second",
		"1500ms":       "whole number of seconds",
		"soon":         "neither a number of seconds",
		"999999999999": "longer than the maximum",
		"":             "empty",
	}
	for in, want := range bad {
		_, err := ParseSchedule(Interval, in, "UTC")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("interval %q: error %v, want it to mention %q", in, err, want)
		}
	}
}

func TestIntervalFirstAndGrid(t *testing.T) {
	s := mustSchedule(t, Interval, "3600", "UTC")
	now := time.Date(2025, 6, 1, 10, 0, 0, 700_000_000, time.UTC)
	first, err := s.First(now)
	if err != nil || !first.Equal(time.Date(2025, 6, 1, 11, 0, 1, 0, time.UTC)) {
		t.Fatalf("first run = %v, %v; want one interval after creation, on a whole second", first, err)
	}
	slot := first
	// On time: the next slot.
	if got := s.After(slot, slot.Add(2*time.Second)); !got.Equal(slot.Add(time.Hour)) {
		t.Errorf("after an on-time run: %v, want %v", got, slot.Add(time.Hour))
	}
	// Three slots missed: one run now, then back on the original grid.
	late := slot.Add(3*time.Hour + 30*time.Minute)
	if got := s.After(slot, late); !got.Equal(slot.Add(4 * time.Hour)) {
		t.Errorf("after a late run: %v, want %v (grid kept, missed slots skipped)", got, slot.Add(4*time.Hour))
	}
	// Exactly on a later grid point: strictly after now.
	if got := s.After(slot, slot.Add(2*time.Hour)); !got.Equal(slot.Add(3 * time.Hour)) {
		t.Errorf("after a run exactly on a grid point: %v", got)
	}
}

func TestOnce(t *testing.T) {
	paris := mustZone(t, "Europe/Paris")
	now := time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)

	s := mustSchedule(t, Once, "2025-06-01T12:00:00+02:00", "Europe/Paris")
	first, err := s.First(now)
	if err != nil || !first.Equal(time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("once with offset: %v, %v", first, err)
	}
	if next := s.After(first, first); !next.IsZero() {
		t.Errorf("a once task has no run after its first: %v", next)
	}

	// Without an offset the time is read in the task's zone.
	for _, v := range []string{"2025-06-01T12:00", "2025-06-01T12:00:00", "2025-06-01 12:00", "2025-06-01 12:00:00"} {
		s := mustSchedule(t, Once, v, "Europe/Paris")
		if want := time.Date(2025, 6, 1, 12, 0, 0, 0, paris); !s.at.Equal(want) {
			t.Errorf("once %q in Europe/Paris = %v, want %v", v, s.at, want)
		}
	}
	// The same wall time in another zone is another instant.
	ny := mustSchedule(t, Once, "2025-06-01T12:00", "America/New_York")
	if ny.at.Equal(s.at) {
		t.Error("a zoneless once time must be read in the task's zone")
	}

	past := mustSchedule(t, Once, "2025-06-01T09:59:59+02:00", "Europe/Paris")
	if _, err := past.First(now); err == nil || !strings.Contains(err.Error(), "already passed") {
		t.Errorf("once in the past: %v", err)
	}
	if _, err := ParseSchedule(Once, "tomorrow at nine", "UTC"); err == nil || !strings.Contains(err.Error(), "ISO 8601") {
		t.Errorf("bad once value: %v", err)
	}
}

func TestCronInZone(t *testing.T) {
	s := mustSchedule(t, Cron, "0  9 * *   1-5", "Europe/Paris")
	if s.Value != "0 9 * * 1-5" {
		t.Errorf("canonical cron %q", s.Value)
	}
	// Friday 10:00 in Paris -> Monday 09:00 in Paris, 07:00 UTC in summer.
	fri := time.Date(2025, 6, 6, 8, 0, 0, 0, time.UTC)
	next, err := s.First(fri)
	if err != nil || !next.Equal(time.Date(2025, 6, 9, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("summer: %v, %v", next, err)
	}
	// In winter Paris is UTC+1: 08:00 UTC.
	next, _ = s.First(time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC))
	if !next.Equal(time.Date(2025, 1, 6, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("winter: %v", next)
	}
	// The result is shown in the task's zone.
	if name, _ := next.Zone(); name != "CET" {
		t.Errorf("next run zone %s, want CET", name)
	}
	// The same expression in UTC runs at 09:00 UTC: the zone is honoured.
	u := mustSchedule(t, Cron, "0 9 * * 1-5", "UTC")
	if n, _ := u.First(time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)); !n.Equal(time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("UTC: %v", n)
	}
	d := mustSchedule(t, Cron, "@Daily", "UTC")
	if n, _ := d.First(time.Date(2025, 1, 6, 13, 0, 0, 0, time.UTC)); !n.Equal(time.Date(2025, 1, 7, 0, 0, 0, 0, time.UTC)) || d.Value != "@daily" {
		t.Errorf("@daily: %v %q", n, d.Value)
	}
}

func TestCronErrorsNameTheField(t *testing.T) {
	cases := map[string][]string{
		"0 25 * * *":         {"hour field \"25\"", "above maximum (23)", "0-23"},
		"61 * * * *":         {"minute field \"61\"", "0-59"},
		"0 9 * * 7":          {"day-of-week field \"7\"", "0 is Sunday"},
		"0 9 32 * *":         {"day-of-month field"},
		"0 9 * foo *":        {"month field \"foo\"", "\"foo\" is neither a number nor a known name"},
		"0 9 * *":            {"expected 5 fields", "found 4"},
		"0 0 9 * * *":        {"found 6", "seconds field is not supported"},
		"@dialy":             {"unknown descriptor", "@daily"},
		"@every 1h":          {"interval schedule type"},
		"TZ=UTC 0 9 * * *":   {"time zone"},
		"*/0 * * * *":        {"minute field", "step"},
		"0 9 * * mon-sunday": {"day-of-week field"},
	}
	for expr, wants := range cases {
		_, err := ParseSchedule(Cron, expr, "UTC")
		if err == nil {
			t.Errorf("cron %q accepted", expr)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("cron %q: error %q does not mention %q", expr, err, w)
			}
		}
	}
	never := mustSchedule(t, Cron, "0 0 30 2 *", "UTC")
	if _, err := never.First(time.Now()); err == nil || !strings.Contains(err.Error(), "never matches") {
		t.Errorf("February 30: %v", err)
	}
}

func TestCronSpringForward(t *testing.T) {
	// Europe/Paris jumps from 02:00 to 03:00 on 2025-03-30: 02:30 does not
	// exist that day. The daily task runs at 03:30, and the next day at 02:30.
	s := mustSchedule(t, Cron, "30 2 * * *", "Europe/Paris")
	first, _ := s.First(time.Date(2025, 3, 29, 12, 0, 0, 0, time.UTC))
	if !first.Equal(time.Date(2025, 3, 30, 1, 30, 0, 0, time.UTC)) {
		t.Fatalf("spring-forward day: %v, want 03:30 CEST (01:30 UTC)", first)
	}
	if got := first.Format("15:04 MST"); got != "03:30 CEST" {
		t.Errorf("shown as %s", got)
	}
	second := s.After(first, first.Add(time.Second))
	if !second.Equal(time.Date(2025, 3, 31, 0, 30, 0, 0, time.UTC)) {
		t.Errorf("day after: %v, want 02:30 CEST", second)
	}
	// America/New_York, 2025-03-09, same rule.
	ny := mustSchedule(t, Cron, "30 2 * * *", "America/New_York")
	got, _ := ny.First(time.Date(2025, 3, 9, 0, 0, 0, 0, mustZone(t, "America/New_York")))
	if got.Format("2006-01-02 15:04 MST") != "2025-03-09 03:30 EDT" {
		t.Errorf("New York spring-forward: %s", got.Format("2006-01-02 15:04 MST"))
	}

	// A frequent task just continues after the gap.
	q := mustSchedule(t, Cron, "*/15 * * * *", "Europe/Paris")
	var seq []string
	for _, at := range q.Preview(time.Date(2025, 3, 30, 0, 40, 0, 0, time.UTC), 4) {
		seq = append(seq, at.Format("15:04 MST"))
	}
	if strings.Join(seq, ",") != "01:45 CET,03:00 CEST,03:15 CEST,03:30 CEST" {
		t.Errorf("quarter-hourly across the gap: %v", seq)
	}
}

func TestCronFallBackRunsOnce(t *testing.T) {
	// America/New_York repeats 01:00-02:00 on 2025-11-02. A daily 01:30
	// task runs at the first 01:30 and not again at the second.
	ny := mustZone(t, "America/New_York")
	s := mustSchedule(t, Cron, "30 1 * * *", "America/New_York")
	first, _ := s.First(time.Date(2025, 11, 1, 12, 0, 0, 0, ny))
	if first.Format("2006-01-02 15:04 MST") != "2025-11-02 01:30 EDT" {
		t.Fatalf("fall-back day: %s", first.Format("2006-01-02 15:04 MST"))
	}
	next := s.After(first, first.Add(time.Second))
	if next.Format("2006-01-02 15:04 MST") != "2025-11-03 01:30 EST" {
		t.Errorf("after the first 01:30: %s, want the next day (no second run at 01:30 EST)", next.Format("2006-01-02 15:04 MST"))
	}
	// Even when the scheduler looks during the repeated hour.
	during := time.Date(2025, 11, 2, 6, 10, 0, 0, time.UTC) // 01:10 EST, the second pass
	if n := s.Next(during); !n.Equal(next) {
		t.Errorf("looking during the repeated hour: %v, want %v", n, next)
	}

	// Europe/Paris, 2025-10-26 (02:00-03:00 repeated).
	p := mustSchedule(t, Cron, "30 2 * * *", "Europe/Paris")
	f, _ := p.First(time.Date(2025, 10, 25, 12, 0, 0, 0, time.UTC))
	n := p.After(f, f.Add(time.Second))
	if f.Format("01-02 15:04 MST") != "10-26 02:30 CEST" || n.Format("01-02 15:04 MST") != "10-27 02:30 CET" {
		t.Errorf("Paris fall-back: %s then %s", f.Format("01-02 15:04 MST"), n.Format("01-02 15:04 MST"))
	}

	// An hourly task runs once per wall-clock hour: the repeated 01:00 is
	// not run a second time.
	h := mustSchedule(t, Cron, "0 * * * *", "America/New_York")
	var seq []string
	for _, at := range h.Preview(time.Date(2025, 11, 2, 0, 30, 0, 0, ny), 3) {
		seq = append(seq, at.Format("15:04 MST"))
	}
	if strings.Join(seq, ",") != "01:00 EDT,02:00 EST,03:00 EST" {
		t.Errorf("hourly across fall-back: %v", seq)
	}
}

func TestWallTimeIsDeterministic(t *testing.T) {
	// time.Date picks differently per zone for skipped and repeated
	// times; WallTime always takes the first occurrence and shifts skipped
	// times forward.
	cases := []struct {
		zone string
		wall time.Time
		want string
	}{
		{"America/New_York", time.Date(2025, 3, 9, 2, 30, 0, 0, time.UTC), "2025-03-09 03:30 EDT"},
		{"Europe/Paris", time.Date(2025, 3, 30, 2, 30, 0, 0, time.UTC), "2025-03-30 03:30 CEST"},
		{"America/New_York", time.Date(2025, 11, 2, 1, 30, 0, 0, time.UTC), "2025-11-02 01:30 EDT"},
		{"Europe/Paris", time.Date(2025, 10, 26, 2, 30, 0, 0, time.UTC), "2025-10-26 02:30 CEST"},
		// Lord Howe Island moves its clocks by 30 minutes.
		{"Australia/Lord_Howe", time.Date(2025, 10, 5, 2, 15, 0, 0, time.UTC), "2025-10-05 02:45 +11"},
		{"Asia/Tokyo", time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC), "2025-06-01 09:00 JST"},
	}
	for _, c := range cases {
		got := WallTime(c.wall, mustZone(t, c.zone)).Format("2006-01-02 15:04 MST")
		if got != c.want {
			t.Errorf("%s %s: %s, want %s", c.zone, c.wall.Format("15:04"), got, c.want)
		}
	}
}

func TestPreviewAndDescribe(t *testing.T) {
	from := time.Date(2025, 6, 6, 8, 0, 0, 0, time.UTC) // Friday
	s := mustSchedule(t, Cron, "0 9 * * 1-5", "Europe/Paris")
	var days []string
	for _, at := range s.Preview(from, 5) {
		days = append(days, at.Format("Mon 15:04"))
	}
	if strings.Join(days, ",") != "Mon 09:00,Tue 09:00,Wed 09:00,Thu 09:00,Fri 09:00" {
		t.Errorf("preview: %v", days)
	}
	iv := mustSchedule(t, Interval, "5400", "UTC")
	pv := iv.Preview(from, 3)
	if len(pv) != 3 || !pv[0].Equal(from.Add(90*time.Minute)) || !pv[2].Equal(from.Add(270*time.Minute)) {
		t.Errorf("interval preview: %v", pv)
	}
	once := mustSchedule(t, Once, "2025-06-07T10:00:00Z", "UTC")
	if pv := once.Preview(from, 5); len(pv) != 1 {
		t.Errorf("once preview: %v", pv)
	}
	if pv := once.Preview(from.AddDate(0, 1, 0), 5); len(pv) != 0 {
		t.Errorf("past once preview: %v", pv)
	}

	words := map[string]Schedule{
		"every 1h30m":                     iv,
		"every 1d":                        mustSchedule(t, Interval, "86400", "UTC"),
		"every 45s":                       mustSchedule(t, Interval, "45", "UTC"),
		"every 1d1h1m1s":                  mustSchedule(t, Interval, "90061", "UTC"),
		"cron 0 9 * * 1-5 (Europe/Paris)": s,
		"once at 2025-06-07 12:00 CEST":   mustSchedule(t, Once, "2025-06-07T10:00:00Z", "Europe/Paris"),
	}
	for want, sched := range words {
		if got := sched.Describe(); got != want {
			t.Errorf("Describe = %q, want %q", got, want)
		}
	}
}

func TestZones(t *testing.T) {
	if _, _, err := LoadZone("Europe/Pari"); err == nil || !strings.Contains(err.Error(), "IANA") {
		t.Errorf("unknown zone: %v", err)
	}
	_, name, err := LoadZone("")
	if err != nil || name == "" || name != LocalZoneName() {
		t.Errorf("default zone %q, %v", name, err)
	}
	t.Setenv("TZ", "Asia/Tokyo")
	if LocalZoneName() != "Asia/Tokyo" {
		t.Errorf("local zone with TZ set: %s", LocalZoneName())
	}
	if _, err := ParseSchedule("weekly", "x", "UTC"); err == nil || !strings.Contains(err.Error(), "unknown schedule type") {
		t.Errorf("unknown type: %v", err)
	}
}

// In Antarctica/Troll the clocks go back two hours: an every-minute cron
// claimed at the start of the repeated time still has a next run. Wall
// times repeated by the change run at their first occurrence only, so the
// next run is the first wall time not already passed: 03:00.
func TestCronThroughATwoHourFallBack(t *testing.T) {
	sched, err := ParseSchedule(Cron, "* * * * *", "Antarctica/Troll")
	if err != nil {
		t.Fatal(err)
	}
	loc := sched.Location()
	// 2025-10-26 01:00 UTC is 03:00 +02 becoming 01:00 +00.
	at := time.Date(2025, 10, 26, 1, 0, 30, 0, time.UTC)
	next := sched.After(at, at)
	if want := time.Date(2025, 10, 26, 3, 0, 0, 0, time.UTC); !next.Equal(want) {
		t.Fatalf("next after %s = %s (%s)", at, next, next.In(loc))
	}
}
