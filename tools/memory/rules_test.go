package memory

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jarvis-workbench/jarvis/store"
	memstore "github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/tools"
)

type recordingConfirmer struct {
	mu     sync.Mutex
	answer tools.Decision
	reqs   []tools.ConfirmRequest
}

func (c *recordingConfirmer) Confirm(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	return c.answer, nil
}

func indexVia(t *testing.T, e *tools.Executor, path string) tools.Result {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"path": path})
	return e.Execute(ctx, tools.Call{ID: "i1", Name: "memory_index", Arguments: string(b)})
}

func indexExecutor(t *testing.T, s *memstore.Store, c tools.Confirmer, deps tools.Deps) *tools.Executor {
	t.Helper()
	e, err := tools.NewExecutor([]tools.Tool{NewIndex(s, deps, Options{})}, tools.ExecutorOptions{Confirmer: c})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestIndexToolAsksOutsideTheWorkingDirectory(t *testing.T) {
	s := newStore(t)
	work, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(work, "in.txt"), "inside the working directory: otters")
	writeFile(t, filepath.Join(outside, "out.txt"), "outside the working directory: beavers")
	t.Chdir(work)

	c := &recordingConfirmer{answer: tools.AllowOnce}
	e := indexExecutor(t, s, c, tools.Deps{})
	if r := indexVia(t, e, "."); !r.Success || len(c.reqs) != 0 {
		t.Fatalf("inside: %q, %d requests", r.Content, len(c.reqs))
	}
	if r := indexVia(t, e, outside); !r.Success || !strings.HasPrefix(r.Content, "Indexed 1 chunks from "+outside) {
		t.Fatalf("approved outside: %q", r.Content)
	}
	if len(c.reqs) != 1 || c.reqs[0].Reason != "indexes "+outside+", outside the working directory" {
		t.Fatalf("requests = %+v", c.reqs)
	}

	// Nobody to ask: refused, nothing indexed.
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "x.txt"), "never indexed: herons")
	r := indexVia(t, indexExecutor(t, s, nil, tools.Deps{}), other)
	if r.Success || r.Status != tools.StatusDenied || !strings.Contains(r.Content, "(it indexes "+other+", outside the working directory)") {
		t.Errorf("nobody to ask: %+v", r)
	}
	// Called without the executor's gate, the tool refuses by itself.
	if r := run(t, NewIndex(s, tools.Deps{}, Options{}), tools.Args{"path": other}); r.Success || r.Content != "Access denied: "+other+" is outside the working directory, and the call was not approved." {
		t.Errorf("direct call: %q", r.Content)
	}
	if res, _ := s.Search(ctx, "herons", 5); len(res.Hits) != 0 {
		t.Error("a refused directory was indexed")
	}
}

func TestIndexToolReachFollowsAllowedDirs(t *testing.T) {
	s := newStore(t)
	t.Chdir(t.TempDir())
	readDir, indexDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(readDir, "a.txt"), "file_read may read this")
	writeFile(t, filepath.Join(indexDir, "b.txt"), "memory_index may index this")

	c := &recordingConfirmer{answer: tools.Deny}
	e := indexExecutor(t, s, c, tools.Deps{Settings: map[string]tools.Settings{"file_read": {AllowedDirs: []string{readDir}}}})
	if r := indexVia(t, e, readDir); !r.Success || len(c.reqs) != 0 {
		t.Errorf("file_read's allowed_dirs: %q, %d requests", r.Content, len(c.reqs))
	}
	e = indexExecutor(t, s, c, tools.Deps{Settings: map[string]tools.Settings{
		"file_read": {AllowedDirs: []string{readDir}}, "memory_index": {AllowedDirs: []string{indexDir}}}})
	if r := indexVia(t, e, indexDir); !r.Success || len(c.reqs) != 0 {
		t.Errorf("memory_index's own allowed_dirs: %q", r.Content)
	}
	if r := indexVia(t, e, readDir); r.Success || len(c.reqs) != 0 || !strings.Contains(r.Content, "[tool.memory_index] allowed_dirs") {
		t.Errorf("memory_index's own allowed_dirs replace file_read's, as a hard limit: %q, %d requests", r.Content, len(c.reqs))
	}
	bad := NewIndex(s, tools.Deps{Settings: map[string]tools.Settings{"memory_index": {AllowedDirs: []string{"/definitely/not/here"}}}}, Options{})
	if r := run(t, bad, tools.Args{"path": "."}); r.Success || !strings.Contains(r.Content, "misconfigured") {
		t.Errorf("misconfigured: %q", r.Content)
	}
}

// homeTree is a home directory with credential stores among notes.
func homeTree(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("JARVIS_CONFIG", filepath.Join(home, "dotfiles", "jarvis.toml"))
	t.Setenv("JARVIS_DB", "")
	for rel, content := range map[string]string{
		"notes/plan.md":                  "The garden plan: tomatoes and basil.",
		".docker/config.json":            `{"auths": {"SECRETregistry": {}}}`,
		".config/gh/hosts.yml":           "github.com: oauth_token: SECRETgh",
		".bash_history":                  "mysql -pSECREThistory",
		".npmrc":                         "//registry.npmjs.org/:_authToken=SECRETnpm",
		".aws/credentials":               "aws_secret_access_key = SECRETaws",
		".kube/config":                   "token: SECRETkube",
		"dotfiles/jarvis.toml":           "[channels.team]\ntoken = \"SECRETjarvis\"",
		".config/jarvis/config.toml":     "token = \"SECRETdefault\"",
		".local/share/fish/fish_history": "- cmd: export TOKEN=SECRETfish",
	} {
		writeFile(t, filepath.Join(home, rel), content)
	}
	return home
}

func TestIndexSkipsSensitiveFiles(t *testing.T) {
	s := newStore(t)
	home := homeTree(t)
	rep, err := IndexPath(ctx, s, home, IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Indexed) != 1 || rep.Indexed[0] != filepath.Join(home, "notes", "plan.md") {
		t.Errorf("indexed %v", rep.Indexed)
	}
	want := map[string]string{
		".docker/config.json":            "sensitive file (holds container registry credentials)",
		".config/gh/hosts.yml":           "sensitive file (holds GitHub CLI credentials)",
		".bash_history":                  "sensitive file (holds a command history)",
		".npmrc":                         "sensitive file (holds package registry credentials)",
		".aws":                           "sensitive directory (holds AWS credentials)",
		".kube/config":                   "sensitive file (holds Kubernetes cluster credentials)",
		"dotfiles/jarvis.toml":           "sensitive file (is jarvis's configuration (it holds channel tokens))",
		".config/jarvis/config.toml":     "sensitive file (is jarvis's configuration (it holds channel tokens))",
		".local/share/fish/fish_history": "sensitive file (holds a command history)",
	}
	got := reasons(rep, home)
	for rel, reason := range want {
		if got[rel] != reason {
			t.Errorf("%s: skipped as %q, want %q", rel, got[rel], reason)
		}
	}
	if res, _ := s.Search(ctx, "SECRETregistry SECRETgh SECREThistory SECRETnpm SECRETaws SECRETkube SECRETjarvis SECRETfish", 10); len(res.Hits) != 0 {
		t.Errorf("secrets were indexed: %+v", res.Hits)
	}

	// The tool, even approved, and a credential directory as the root.
	t.Chdir(home)
	c := &recordingConfirmer{answer: tools.AllowOnce}
	e := indexExecutor(t, s, c, tools.Deps{})
	for path, want := range map[string]string{
		"~/.aws":              "Cannot index ~/.aws: sensitive directory (holds AWS credentials).",
		".docker/config.json": "Cannot index .docker/config.json: sensitive file (holds container registry credentials).",
	} {
		if r := indexVia(t, e, path); r.Success || r.Content != want {
			t.Errorf("%s: %q, want %q", path, r.Content, want)
		}
	}
	if len(c.reqs) != 0 {
		t.Errorf("asked for paths that are refused anyway: %+v", c.reqs)
	}
}

func TestIndexNeverLeavesTheTree(t *testing.T) {
	s := newStore(t)
	home := homeTree(t)
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(root, "own.txt"), "the tree's own text about kestrels")
	writeFile(t, filepath.Join(outside, "far.txt"), "text outside the tree about albatrosses")
	writeFile(t, filepath.Join(outside, "sub", "deep.txt"), "deeper outside text about pelicans")
	links := map[string]string{
		"to-file.txt":     filepath.Join(outside, "far.txt"),
		"to-dir":          filepath.Join(outside, "sub"),
		"to-docker.json":  filepath.Join(home, ".docker", "config.json"),
		"to-ssh":          filepath.Join(home, ".aws"),
		"inside-link.txt": filepath.Join(root, "own.txt"),
	}
	if _, err := os.Stat("/etc/passwd"); err == nil {
		links["passwd"] = "/etc/passwd"
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := IndexPath(ctx, s, root, IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"to-file.txt":    "symbolic link out of the indexed tree (not followed)",
		"to-dir":         "symbolic link to a directory (not followed)",
		"to-docker.json": "sensitive file (holds container registry credentials)",
		"to-ssh":         "sensitive directory (holds AWS credentials)",
	}
	if links["passwd"] != "" {
		want["passwd"] = "symbolic link out of the indexed tree (not followed)"
	}
	got := reasons(rep, root)
	for name, reason := range want {
		if got[name] != reason {
			t.Errorf("%s: skipped as %q, want %q", name, got[name], reason)
		}
	}
	if len(rep.Indexed) != 2 { // own.txt and the link to it
		t.Errorf("indexed %v", rep.Indexed)
	}
	for _, q := range []string{"albatrosses", "pelicans", "root:x:0", "SECRETregistry"} {
		if res, _ := s.Search(ctx, q, 5); len(res.Hits) != 0 {
			t.Errorf("%q found: the walk left the tree", q)
		}
	}
}

func TestIndexConvertsLatin1(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "menu.txt"), "Caf\xe9 cr\xe8me br\xfbl\xe9e \x93fa\xe7on\x94 \x80 5\n")
	writeFile(t, filepath.Join(root, "controls.dat.txt"), "\x01\x02\x03\xe9\xff\xfe")
	writeFile(t, filepath.Join(root, "broken-utf8.txt"), "na\xc3\xafve and one bad byte \xe9 here")
	rep, err := IndexPath(ctx, s, root, IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Converted) != 1 || rep.Converted[0] != filepath.Join(root, "menu.txt") {
		t.Fatalf("converted = %v", rep.Converted)
	}
	res, _ := s.Search(ctx, "crème brûlée", 5)
	if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Content, "Café crème brûlée “façon” € 5") {
		t.Errorf("search after conversion: %+v", res.Hits)
	}
	got := reasons(rep, root)
	for _, name := range []string{"controls.dat.txt", "broken-utf8.txt"} {
		if !strings.HasPrefix(got[name], "not UTF-8 text") {
			t.Errorf("%s: %q", name, got[name])
		}
	}
	if !strings.Contains(FormatReport(rep, root, 0), "\nNot UTF-8, read as Windows-1252 (Latin-1):\n  "+filepath.Join(root, "menu.txt")) {
		t.Errorf("report: %q", FormatReport(rep, root, 0))
	}
}

func TestIndexMaxFileBytes(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "small.txt"), "short note about wrens")
	writeFile(t, filepath.Join(root, "big.txt"), strings.Repeat("long text about finches ", 20))
	rep, err := IndexPath(ctx, s, root, IndexOptions{MaxFileBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := reasons(rep, root)["big.txt"]; got != "too large (480 bytes, max 100)" || len(rep.Indexed) != 1 {
		t.Errorf("big.txt skipped as %q, indexed %v", got, rep.Indexed)
	}
	if rep, _ = IndexPath(ctx, s, root, IndexOptions{MaxFileBytes: 1000}); len(rep.Indexed) != 1 || len(rep.Unchanged) != 1 {
		t.Errorf("a larger limit: %+v", rep)
	}
	for _, bad := range []int64{-1, MaxFileBytesLimit + 1} {
		if _, err := IndexPath(ctx, s, root, IndexOptions{MaxFileBytes: bad}); err == nil || CheckMaxFileBytes(bad) == nil {
			t.Errorf("limit %d accepted", bad)
		}
	}
	if d := NewIndex(s, tools.Deps{}, Options{MaxFileBytes: 512 << 10}).Spec().Description; !strings.Contains(d, "files over 512 KiB") {
		t.Errorf("description: %q", d)
	}
	t.Chdir(root)
	writeFile(t, filepath.Join(root, "mid.txt"), strings.Repeat("m", 300))
	r := run(t, NewIndex(s, tools.Deps{}, Options{MaxFileBytes: 200}), tools.Args{"path": "mid.txt"})
	if r.Success || r.Content != "Cannot index mid.txt: too large (300 bytes, max 200)." {
		t.Errorf("tool limit: %q", r.Content)
	}
}

func TestForgetDirectory(t *testing.T) {
	s := newStore(t)
	base := t.TempDir()
	dir, sibling := filepath.Join(base, "etc"), filepath.Join(base, "etcetera")
	writeFile(t, filepath.Join(dir, "a.txt"), "alpha text")
	writeFile(t, filepath.Join(dir, "sub", "b.txt"), "beta text")
	writeFile(t, filepath.Join(sibling, "c.txt"), "gamma text")
	for _, d := range []string{dir, sibling} {
		if _, err := IndexPath(ctx, s, d, IndexOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Add(ctx, memstore.Input{Content: "a note", Source: "etc"}); err != nil {
		t.Fatal(err)
	}

	f, err := Forget(ctx, s, dir)
	if err != nil || f.Documents != 2 || f.Under != dir || len(f.Sources) != 2 {
		t.Fatalf("forget %s: %+v, %v", dir, f, err)
	}
	if res, _ := s.Search(ctx, "gamma", 5); len(res.Hits) != 1 {
		t.Error("the sibling directory sharing the prefix was forgotten")
	}
	// A source as stored wins over a path; relative paths and ~ work.
	if f, _ := Forget(ctx, s, "etc"); f.Documents != 1 || f.Under != "" {
		t.Errorf("exact source: %+v", f)
	}
	t.Chdir(base)
	if f, _ := Forget(ctx, s, "etcetera/c.txt"); f.Documents != 1 || f.Sources[0] != filepath.Join(sibling, "c.txt") {
		t.Errorf("relative file: %+v", f)
	}
	if f, err := Forget(ctx, s, "nowhere"); err != nil || f.Documents != 0 {
		t.Errorf("nothing to forget: %+v, %v", f, err)
	}
	if st, _ := s.Stats(ctx); st.Documents != 0 {
		t.Errorf("%d documents left", st.Documents)
	}
}

func TestForgetThroughALinkedDirectory(t *testing.T) {
	s := newStore(t)
	real := t.TempDir()
	writeFile(t, filepath.Join(real, "n.txt"), "linked note")
	link := filepath.Join(t.TempDir(), "notes")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := IndexPath(ctx, s, link, IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	if f, err := Forget(ctx, s, link); err != nil || f.Documents != 1 {
		t.Errorf("forget through the link: %+v, %v", f, err)
	}
}

// contextLimitEmbedder fails, as Ollama does with a 400, for any text
// holding "overlong" while failing is set; else it returns small vectors.
type contextLimitEmbedder struct {
	mu      sync.Mutex
	failing bool
}

func (e *contextLimitEmbedder) Embed(_ context.Context, _ string, inputs []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([][]float32, len(inputs))
	for i, in := range inputs {
		if e.failing && strings.Contains(in, "overlong") {
			return nil, errors.New(`400 Bad Request: {"error":"the input length exceeds the context length"}`)
		}
		out[i] = []float32{float32(len(in)), 1, 0.5}
	}
	return out, nil
}

func TestEmbeddingFailuresAreReportedAndRetried(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "jarvis.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb := &contextLimitEmbedder{failing: true}
	s, err := memstore.New(db, memstore.Options{Embedder: emb, EmbedModel: "nomic-embed-text"})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	good, bad := filepath.Join(root, "good.txt"), filepath.Join(root, "bad.txt")
	writeFile(t, good, "a short text that embeds fine")
	writeFile(t, bad, "an overlong text the model cannot take")

	rep, err := IndexPath(ctx, s, root, IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.EmbedFailed) != 1 || rep.EmbedFailed[0].Path != bad || !strings.Contains(rep.EmbedFailed[0].Reason, "exceeds the context length") {
		t.Fatalf("embed failures = %+v", rep.EmbedFailed)
	}
	text := FormatReport(rep, root, 0)
	if !strings.Contains(text, "\nStored without embeddings (found by keyword search only; the next run embeds them again):\n  "+bad+" (") {
		t.Errorf("report: %q", text)
	}
	if st, _ := s.Stats(ctx); st.Vectors != 1 {
		t.Errorf("%d vectors, want 1 (the good file's)", st.Vectors)
	}

	// The next run retries the file without vectors, and only it.
	rep, _ = IndexPath(ctx, s, root, IndexOptions{})
	if len(rep.Indexed) != 1 || rep.Indexed[0] != bad || len(rep.Unchanged) != 1 || len(rep.EmbedFailed) != 1 {
		t.Errorf("second run: %+v", rep)
	}
	emb.mu.Lock()
	emb.failing = false
	emb.mu.Unlock()
	rep, _ = IndexPath(ctx, s, root, IndexOptions{})
	if len(rep.Indexed) != 1 || len(rep.EmbedFailed) != 0 {
		t.Errorf("once the model works: %+v", rep)
	}
	if st, _ := s.Stats(ctx); st.Vectors != 2 || st.Documents != 2 {
		t.Errorf("stats after the retry: %+v", st)
	}
	if rep, _ = IndexPath(ctx, s, root, IndexOptions{}); len(rep.Unchanged) != 2 {
		t.Errorf("everything embedded is unchanged: %+v", rep)
	}

	// The tool says so too.
	emb.mu.Lock()
	emb.failing = true
	emb.mu.Unlock()
	writeFile(t, bad, "an overlong text, changed")
	t.Chdir(root)
	r := run(t, NewIndex(s, tools.Deps{}, Options{}), tools.Args{"path": root})
	if !r.Success || !strings.Contains(r.Content, "Stored without embeddings") || r.Metadata["files_not_embedded"] != 1 {
		t.Errorf("tool: %+v", r)
	}
}

func TestReindexingForgetsWhatIsRefusedNow(t *testing.T) {
	s := newStore(t)
	home := homeTree(t)
	root := filepath.Join(home, "notes")
	// What an indexer with older rules stored: a credential file, a file
	// under a credential directory, and a link out of the tree.
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	writeFile(t, outside, "text from outside the tree")
	if err := os.Symlink(outside, filepath.Join(root, "host")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ".ssh", "id_rsa"), "-----BEGIN KEY----- SECRETkey")
	writeFile(t, filepath.Join(root, ".npmrc"), "_authToken=SECRETnpm")
	for _, rel := range []string{".npmrc", ".ssh/id_rsa", "host"} {
		if _, err := s.Add(ctx, memstore.Input{Content: "old SECRETold " + rel, Source: filepath.Join(root, rel), Replace: true}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := IndexPath(ctx, s, root, IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Forgotten) != 3 {
		t.Errorf("forgotten = %v", rep.Forgotten)
	}
	if !strings.Contains(FormatReport(rep, root, 0), ", 3 forgotten (indexed before, refused now).") {
		t.Errorf("report: %q", FormatReport(rep, root, 0))
	}
	if res, _ := s.Search(ctx, "SECRETold", 5); len(res.Hits) != 0 {
		t.Errorf("refused files are still in memory: %+v", res.Hits)
	}
	// A file refused as the root is forgotten too.
	if _, err := s.Add(ctx, memstore.Input{Content: "old SECRETold", Source: filepath.Join(home, ".kube", "config"), Replace: true}); err != nil {
		t.Fatal(err)
	}
	if rep, _ := IndexPath(ctx, s, filepath.Join(home, ".kube", "config"), IndexOptions{}); len(rep.Forgotten) != 1 {
		t.Errorf("file root: %+v", rep)
	}
	if st, _ := s.Stats(ctx); st.Documents != 1 { // notes/plan.md
		t.Errorf("%d documents left", st.Documents)
	}
}
