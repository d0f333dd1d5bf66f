package command

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// argvOf runs the argv helper and decodes what the program received.
func argvOf(t *testing.T, r tools.Result) []string {
	t.Helper()
	if !r.Success {
		t.Fatalf("call failed: %+v", r)
	}
	var got []string
	if err := json.Unmarshal([]byte(r.Content), &got); err != nil {
		t.Fatalf("helper output %q: %v", r.Content, err)
	}
	return got
}

func TestHostileValuesStayOneLiteralArgument(t *testing.T) {
	s := helperSpec(t, "argv", "--pattern={v}", "{v}", "x{v}y")
	s.Parameters["v"] = Param{Description: "anything", Required: true, AllowOption: false}
	c := mustCompile(t, s)
	for _, v := range []string{
		`; rm -rf ~`,
		`$(touch /tmp/pwned)`,
		"`id`",
		`"double" 'single' \back\slash`,
		"two\nlines\r\n",
		`* ? [a-z] {a,b} ~ ~/x $HOME %s %n`,
		"  spaces  \t tabs ",
		"",
		"ünïcödé ✓",
		`a && b || c | d > e < f & g`,
	} {
		got := argvOf(t, call(t, c, tools.Args{"v": v}))
		want := []string{"--pattern=" + v, v, "x" + v + "y"}
		if !slices.Equal(got, want) {
			t.Errorf("value %q: the program got %q, want %q", v, got, want)
		}
	}
}

func TestValuesOfEveryTypeAreWrittenAsTheModelSentThem(t *testing.T) {
	s := helperSpec(t, "argv", "{s}", "{i}", "{n}", "{b}", "{e}")
	s.Parameters = map[string]Param{
		"s": str("s", true),
		"i": {Type: "integer", Description: "i", Required: true},
		"n": {Type: "number", Description: "n", Required: true},
		"b": {Type: "boolean", Description: "b", Required: true},
		"e": {Type: "string", Description: "e", Required: true, Enum: []any{"fast", "slow"}},
	}
	c := mustCompile(t, s)
	got := argvOf(t, call(t, c, tools.Args{"s": "text", "i": float64(42), "n": 0.1, "b": true, "e": "slow"}))
	if want := []string{"text", "42", "0.1", "true", "slow"}; !slices.Equal(got, want) {
		t.Fatalf("argv = %q, want %q", got, want)
	}
	// Through the executor the schema is enforced: the enum, the types,
	// and no parameter the command does not take.
	exec, err := tools.NewExecutor([]tools.Tool{New(c)}, tools.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"s":"a","i":1,"n":1,"b":true,"e":"medium"}`:         "must be one of",
		`{"s":"a","i":1.5,"n":1,"b":true,"e":"fast"}`:         "must be an integer",
		`{"s":"a","i":1,"n":1,"b":true,"e":"fast","extra":1}`: "unknown parameter 'extra'",
		`{"i":1,"n":1,"b":true,"e":"fast"}`:                   "missing required parameter 's'",
	} {
		r := exec.Execute(context.Background(), tools.Call{Name: "probe", Arguments: args})
		if r.Success || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %+v, want an error with %q", args, r, want)
		}
	}
}

func TestLeadingDashIsRefusedWhereTheProgramReadsOptions(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	s := helperSpec(t, "touch", marker, "{word}")
	s.Parameters["word"] = str("w", true)
	c := mustCompile(t, s)
	for _, v := range []string{"-rf", "--include=*", "-"} {
		r := call(t, c, tools.Args{"word": v})
		if r.Success || !strings.Contains(r.Content, "starts with '-'") || !strings.Contains(r.Content, "not run") {
			t.Errorf("%q: %+v, want a refusal", v, r)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q: the program ran", v)
		}
	}
	// A dash inside the value, or after the config's own text, is data.
	if r := call(t, c, tools.Args{"word": "a-b"}); !r.Success {
		t.Errorf("a-b: %+v", r)
	}

	// allow_option lets it through; so does a "--" before it.
	s = helperSpec(t, "argv", "{opt}", "--", "{word}", "-e{word}")
	s.Parameters = map[string]Param{
		"opt":  {Description: "an option", Required: true, AllowOption: true},
		"word": str("w", true),
	}
	got := argvOf(t, call(t, mustCompile(t, s), tools.Args{"opt": "--verbose", "word": "-x"}))
	if want := []string{"--verbose", "--", "-x", "-e-x"}; !slices.Equal(got, want) {
		t.Fatalf("argv = %q, want %q", got, want)
	}

	// The value that makes the start of an element counts, even behind an
	// empty one.
	s = helperSpec(t, "argv", "{a}{b}")
	s.Parameters = map[string]Param{"a": str("a", true), "b": str("b", true)}
	if r := call(t, mustCompile(t, s), tools.Args{"a": "", "b": "-v"}); r.Success {
		t.Fatalf("an empty value before a dash let the option through: %+v", r)
	}
}

func TestNULBytesAreRefusedInArgumentsAndKeptInStdin(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	s := helperSpec(t, "touch", marker, "{v}")
	s.Parameters["v"] = str("v", true)
	r := call(t, mustCompile(t, s), tools.Args{"v": "a\x00b"})
	if r.Success || !strings.Contains(r.Content, "NUL") {
		t.Fatalf("%+v, want a refusal naming the NUL byte", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the program ran")
	}

	s = helperSpec(t, "stdin")
	s.Stdin = "begin {text} end"
	s.Parameters["text"] = str("t", true)
	text := "line one\nline two\x00 $(not run) `nor this`\n"
	r = call(t, mustCompile(t, s), tools.Args{"text": text})
	if !r.Success || r.Content != "begin "+text+" end" {
		t.Fatalf("stdin came back as %q (%+v)", r.Content, r)
	}
}

func TestStdinIsEmptyWithoutATemplate(t *testing.T) {
	r := call(t, mustCompile(t, helperSpec(t, "stdin")), nil)
	if !r.Success || r.Content != "(no output)" {
		t.Fatalf("%+v: a command without stdin must read nothing (not jarvis's terminal)", r)
	}
}

func TestOptionalParameterLeftOutDropsItsElements(t *testing.T) {
	s := helperSpec(t, "argv", "--max-count={n}", "{word}", "{dir}")
	s.Stdin = "{word}"
	s.Parameters = map[string]Param{
		"n":    {Type: "integer", Description: "n"},
		"word": str("w", true),
		"dir":  str("d", false),
	}
	c := mustCompile(t, s)
	if got := argvOf(t, call(t, c, tools.Args{"word": "hello"})); !slices.Equal(got, []string{"hello"}) {
		t.Fatalf("argv = %q, want [hello]", got)
	}
	if got := argvOf(t, call(t, c, tools.Args{"word": "hello", "n": float64(3), "dir": nil})); !slices.Equal(got, []string{"--max-count=3", "hello"}) {
		t.Fatalf("argv = %q", got)
	}
}

func TestTildeIsExpandedInTheConfigNeverInValues(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	s := helperSpec(t, "argv", "~/notes/", "~", "~other", "{v}", "~/{v}")
	s.Parameters["v"] = str("v", true)
	got := argvOf(t, call(t, mustCompile(t, s), tools.Args{"v": "~/secret"}))
	want := []string{home + "/notes/", home, "~other", "~/secret", home + "/~/secret"}
	if !slices.Equal(got, want) {
		t.Fatalf("argv = %q, want %q", got, want)
	}
}

func TestLiteralBracesAreWrittenDoubled(t *testing.T) {
	s := helperSpec(t, "argv", "{{}}", "{{{v}}}", "awk '{{print $1}}'")
	s.Parameters["v"] = str("v", true)
	got := argvOf(t, call(t, mustCompile(t, s), tools.Args{"v": "x"}))
	if want := []string{"{}", "{x}", "awk '{print $1}'"}; !slices.Equal(got, want) {
		t.Fatalf("argv = %q, want %q", got, want)
	}
}

func TestFailureSaysTheStatusWithBothStreams(t *testing.T) {
	s := helperSpec(t, "fail", "partial output", "no such file", "{code}")
	s.Parameters["code"] = Param{Type: "integer", Description: "c", Required: true}
	c := mustCompile(t, s)
	r := call(t, c, tools.Args{"code": float64(3)})
	if r.Success || r.Status != tools.StatusError {
		t.Fatalf("%+v, want a failure", r)
	}
	for _, want := range []string{"exit status 3", "--- stdout ---\npartial output", "--- stderr ---\nno such file"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("result %q lacks %q", r.Content, want)
		}
	}
	if r.Metadata["exit_code"] != 3 {
		t.Errorf("metadata = %v", r.Metadata)
	}
	// On success only stdout is the result.
	if r := call(t, c, tools.Args{"code": float64(0)}); !r.Success || r.Content != "partial output" {
		t.Errorf("success: %+v", r)
	}
	// success_codes: grep's "no match" is 1.
	s.SuccessCodes = []int{0, 1}
	if r := call(t, mustCompile(t, s), tools.Args{"code": float64(1)}); !r.Success {
		t.Errorf("status 1 with success_codes [0, 1]: %+v", r)
	}
}

func TestOutputIsCappedLikeTheCodeTools(t *testing.T) {
	s := helperSpec(t, "flood", "100000")
	s.MaxOutputBytes = 1000
	r := call(t, mustCompile(t, s), nil)
	if !r.Success || !strings.Contains(r.Content, "[output truncated: 99000 bytes omitted]") {
		t.Fatalf("%.200q", r.Content)
	}
	if len(r.Content) > 1100 || r.Metadata["truncated"] != true || r.Metadata["stdout_bytes"] != int64(100000) {
		t.Fatalf("%d bytes kept, metadata %v", len(r.Content), r.Metadata)
	}
}

func TestCwd(t *testing.T) {
	dir := t.TempDir()
	s := helperSpec(t, "pwd")
	s.Cwd = dir
	r := call(t, mustCompile(t, s), nil)
	real, _ := filepath.EvalSymlinks(dir)
	if !r.Success || (r.Content != dir && r.Content != real) {
		t.Fatalf("ran in %q, want %q", r.Content, dir)
	}
}

// A command without cwd runs in the tools' working directory (an
// evaluation case's scratch directory), and its cwd wins over that.
func TestACommandRunsInTheToolsWorkingDirectory(t *testing.T) {
	work, own := t.TempDir(), t.TempDir()
	ran := func(s Spec) string {
		r := tools.NewRegistry()
		if err := Register(r, []*Command{mustCompile(t, s)}); err != nil {
			t.Fatal(err)
		}
		tl, err := r.Build(s.Name, tools.Deps{WorkDir: work})
		if err != nil {
			t.Fatal(err)
		}
		res := tl.Execute(context.Background(), nil)
		if !res.Success {
			t.Fatalf("%+v", res)
		}
		got, _ := filepath.EvalSymlinks(res.Content)
		return got
	}
	realWork, _ := filepath.EvalSymlinks(work)
	realOwn, _ := filepath.EvalSymlinks(own)
	if got := ran(helperSpec(t, "pwd")); got != realWork {
		t.Errorf("ran in %q, want the working directory %q", got, realWork)
	}
	s := helperSpec(t, "pwd")
	s.Cwd = own
	if got := ran(s); got != realOwn {
		t.Errorf("ran in %q, want its cwd %q", got, realOwn)
	}
}

func TestConfirmationIsOnUnlessTheEntrySaysOtherwise(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	s := helperSpec(t, "touch", marker)
	c := mustCompile(t, s)
	if !New(c).Spec().RequiresConfirmation {
		t.Fatal("a command must ask by default")
	}
	// With nobody to ask, the call is denied and the program never runs.
	exec, err := tools.NewExecutor([]tools.Tool{New(c)}, tools.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), tools.Call{Name: "probe", Arguments: "{}"})
	if r.Success || r.Status != tools.StatusDenied {
		t.Fatalf("%+v, want denied", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a denied command ran")
	}
	off := false
	s.Confirm = &off
	if New(mustCompile(t, s)).Spec().RequiresConfirmation {
		t.Fatal("confirm = false must turn asking off")
	}
	spec := New(c).Spec()
	if spec.Category != Category || spec.Name != "probe" || spec.Description != "A test command." {
		t.Fatalf("spec %+v", spec)
	}
}

func TestRegisterRefusesANameTaken(t *testing.T) {
	r := tools.NewRegistry()
	if err := r.Register("calculator", func(tools.Deps) (tools.Tool, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	s := helperSpec(t, "argv")
	if err := Register(r, []*Command{mustCompile(t, s)}); err != nil {
		t.Fatal(err)
	}
	if !r.Has("probe") {
		t.Fatal("not registered")
	}
	s.Name = "calculator"
	if err := Register(r, []*Command{mustCompile(t, s)}); err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("err = %v", err)
	}
}
