package tasks

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	gpu = Server{Engine: "ollama", Host: "http://gpu:11434", Model: "qwen3:8b"}
	me  = Claimant{Owner: "host/42/aa", Process: Process{Machine: "host", PID: 42, Command: "scheduler start"},
		Server: Server{Engine: "ollama", Host: "http://127.0.0.1:11434"}}
)

func TestTasksRecordServerTimeoutAndAgent(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60", Server: gpu, Timeout: 90 * time.Second}, t0)
	got, _ := s.Get(task.ID)
	if got.Server != gpu || got.Timeout != 90*time.Second || got.Agent != DefaultAgent {
		t.Errorf("stored %+v", got)
	}
	b, err := json.Marshal(got)
	if err != nil || !strings.Contains(string(b), `"timeout":"1m30s"`) || !strings.Contains(string(b), `"host":"http://gpu:11434"`) {
		t.Errorf("JSON %s %v", b, err)
	}
	var back Task
	if err := json.Unmarshal(b, &back); err != nil || back.Timeout != got.Timeout || back.Server != gpu || back.ID != got.ID {
		t.Errorf("JSON round trip: %+v %v", back, err)
	}

	withTools := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60", Tools: []string{"calculator"}}, t0)
	explicit := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60", Tools: []string{"calculator"}, Agent: "simple"}, t0)
	if withTools.Agent != ToolsAgent || explicit.Agent != "simple" {
		t.Errorf("agents: with tools %q, explicit %q", withTools.Agent, explicit.Agent)
	}

	for _, d := range []time.Duration{time.Millisecond, 8 * 24 * time.Hour} {
		if _, err := s.Create(NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60", TimeZone: "UTC", Timeout: d}, t0); err == nil {
			t.Errorf("created a task with a %s limit", d)
		}
	}
}

func TestClaimsRecordProcessAndServer(t *testing.T) {
	s := openStore(t)
	own := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60", Server: gpu}, t0)
	legacy := mustCreate(t, s, NewTask{Prompt: "q", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	now := t0.Add(61 * time.Second)

	due, err := s.Due(now, 10)
	if err != nil || len(due) != 2 {
		t.Fatalf("due %v %v", due, err)
	}
	if next, ok, _ := s.NextAfter(now); ok {
		t.Errorf("NextAfter found %v with every task due", next)
	}
	claims, err := s.ClaimSlots([]Slot{{own.ID, own.NextRun}, {legacy.ID, legacy.NextRun}, {legacy.ID, legacy.NextRun}}, now, me)
	if err != nil || len(claims) != 2 {
		t.Fatalf("claims %+v %v (the repeated slot must be claimed once)", claims, err)
	}
	byID := map[string]Claim{claims[0].Task.ID: claims[0], claims[1].Task.ID: claims[1]}
	if byID[own.ID].Server != gpu || byID[legacy.ID].Server != me.Server {
		t.Errorf("claim servers: own %v legacy %v", byID[own.ID].Server, byID[legacy.ID].Server)
	}
	running, _ := s.Get(own.ID)
	if running.RunningIn == nil || *running.RunningIn != me.Process {
		t.Errorf("running task does not name its process: %+v", running.RunningIn)
	}
	if next, ok, _ := s.NextAfter(now); ok {
		t.Errorf("running tasks are in the due index: %v", next)
	}
	_, run, err := s.Finish(byID[legacy.ID], Finish{At: now.Add(time.Second), Success: true, Model: "llama3.1"})
	if err != nil || run.Process != me.Process || run.Server.Host != me.Server.Host || run.Server.Model != "llama3.1" {
		t.Errorf("legacy run %+v %v", run, err)
	}
	_, run, _ = s.Finish(byID[own.ID], Finish{At: now.Add(time.Second), Error: "timed out", Outcome: OutcomeTimedOut, Model: "ignored"})
	if run.Outcome != OutcomeTimedOut || run.Server != gpu {
		t.Errorf("timed-out run %+v", run)
	}
	if done, _ := s.Get(own.ID); done.RunningIn != nil || done.LastOutcome != OutcomeTimedOut {
		t.Errorf("after the run: %+v", done)
	}
	if next, ok, _ := s.NextAfter(now); !ok || !next.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("NextAfter = %v %v", next, ok)
	}
}

func TestSkipRecordsASlotOnce(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60", Server: gpu}, t0)
	slot := Slot{task.ID, task.NextRun}
	now := t0.Add(5 * time.Minute)
	got, run, ok, err := s.Skip(slot, now, me, "skipped: no scheduler could reach the server")
	if err != nil || !ok || run.Outcome != OutcomeSkipped || run.Success || run.Server != gpu || run.Process != me.Process {
		t.Fatalf("skip: %+v %v %v", run, ok, err)
	}
	if got.Running || got.LastOutcome != OutcomeSkipped || !got.NextRun.Equal(t0.Add(6*time.Minute)) {
		t.Errorf("after the skip: %+v", got)
	}
	if _, _, ok, err := s.Skip(slot, now, me, "again"); ok || err != nil {
		t.Errorf("skipped the same slot twice: %v %v", ok, err)
	}
	_, runs, _ := s.Logs(task.ID, 0)
	if len(runs) != 1 {
		t.Errorf("%d log rows, want 1", len(runs))
	}

	once := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Once, ScheduleValue: "+1h"}, t0)
	done, _, _, _ := s.Skip(Slot{once.ID, once.NextRun}, t0.Add(2*time.Hour), me, "skipped")
	if done.Status != Completed {
		t.Errorf("a skipped once task is %s, want completed", done.Status)
	}
}

func TestManualRunsOfFinishedTasksAreRefused(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	s.Pause(task.ID)
	if _, err := s.ClaimManual(task.ID, t0, me); err != nil {
		t.Errorf("a paused task can run by hand: %v", err)
	}
	other := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	s.Cancel(other.ID)
	var se *StateError
	if _, err := s.ClaimManual(other.ID, t0, me); !errors.As(err, &se) || !strings.Contains(err.Error(), "is cancelled") {
		t.Errorf("manual run of a cancelled task: %v", err)
	}
	once := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Once, ScheduleValue: "+1m"}, t0)
	cs, _ := s.ClaimDue(t0.Add(time.Hour), 1, me)
	s.Finish(cs[0], Finish{At: t0.Add(time.Hour), Success: true})
	if _, err := s.ClaimManual(once.ID, t0, me); !errors.As(err, &se) || !strings.Contains(err.Error(), "has completed") {
		t.Errorf("manual run of a completed task: %v", err)
	}
}

func TestStatuses(t *testing.T) {
	s := openStore(t)
	a := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	b := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	s.Cancel(b.ID)
	got, err := s.Statuses([]string{a.ID, b.ID, "ffffffffffffffff"})
	if err != nil || len(got) != 2 || got[a.ID] != Active || got[b.ID] != Cancelled {
		t.Errorf("statuses %v %v", got, err)
	}
}

func TestPeers(t *testing.T) {
	s := openStore(t)
	p := Peer{ID: "host/1/a", Process: Process{Machine: "host", PID: 1, Command: "scheduler start"}, Dedicated: true,
		Server: gpu, Started: t0, Beat: t0, Expires: t0.Add(30 * time.Second), Reach: map[string]bool{gpu.Key(): true}}
	q := Peer{ID: "host/2/b", Process: Process{Machine: "host", PID: 2, Command: "tui"}, Started: t0, Beat: t0, Expires: t0.Add(30 * time.Second)}
	if err := s.Beat(p); err != nil {
		t.Fatal(err)
	}
	if err := s.Beat(q); err != nil {
		t.Fatal(err)
	}
	all, err := s.Peers()
	if err != nil || len(all) != 2 {
		t.Fatalf("peers %+v %v", all, err)
	}
	for _, got := range all {
		if got.ID == p.ID && (!got.Dedicated || !got.Reach[gpu.Key()] || got.Server != gpu || got.Process != p.Process) {
			t.Errorf("stored peer %+v", got)
		}
	}
	// A beat drops the entries it is told are dead, never its own.
	p.Beat = t0.Add(10 * time.Second)
	if err := s.Beat(p, q.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if all, _ = s.Peers(); len(all) != 1 || all[0].ID != p.ID || !all[0].Beat.Equal(p.Beat) {
		t.Errorf("after the beat: %+v", all)
	}
	if err := s.Leave(p.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Leave(p.ID); err != nil {
		t.Errorf("leaving twice: %v", err)
	}
	if all, _ = s.Peers(); len(all) != 0 {
		t.Errorf("after leaving: %+v", all)
	}
}

func TestRelativeOnceTimes(t *testing.T) {
	for value, want := range map[string]time.Duration{
		"+2h": 2 * time.Hour, "+90m": 90 * time.Minute, "in 1d6h": 30 * time.Hour, "In 45s": 45 * time.Second, "+1d": 24 * time.Hour,
	} {
		sched, err := ParseScheduleAt(Once, value, "UTC", t0)
		if err != nil {
			t.Errorf("%q: %v", value, err)
			continue
		}
		if first, err := sched.First(t0); err != nil || !first.Equal(t0.Add(want)) {
			t.Errorf("%q runs at %v (%v), want %v", value, first, err, t0.Add(want))
		}
	}
	for _, value := range []string{"+0s", "+-1h", "+soon", "in a while"} {
		if _, err := ParseScheduleAt(Once, value, "UTC", t0); err == nil {
			t.Errorf("%q accepted", value)
		}
	}
	// A relative time needs to know "now".
	if _, err := ParseSchedule(Once, "+2h", "UTC"); err == nil {
		t.Error("ParseSchedule read a relative time without knowing now")
	}
}

func TestAgentFor(t *testing.T) {
	cases := []struct {
		agent string
		tools []string
		want  string
	}{
		{"", nil, DefaultAgent},
		{"", []string{" "}, DefaultAgent},
		{"", []string{"calculator"}, ToolsAgent},
		{"react", []string{"calculator"}, "react"},
		{" simple ", []string{"calculator"}, "simple"},
	}
	for _, c := range cases {
		if got := AgentFor(c.agent, c.tools); got != c.want {
			t.Errorf("AgentFor(%q, %v) = %q, want %q", c.agent, c.tools, got, c.want)
		}
	}
}
