package ollamatest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
)

// pull posts body to /api/pull and returns the status and each line.
func pull(t *testing.T, url, body string) (int, []string) {
	t.Helper()
	status, _, out := post(t, url, "/api/pull", body)
	return status, lines(out)
}

func progressOf(t *testing.T, line string) api.ProgressResponse {
	t.Helper()
	var p api.ProgressResponse
	if err := json.Unmarshal([]byte(line), &p); err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
	return p
}

func TestPullStreamsProgressThenTheModelExists(t *testing.T) {
	srv := New(t)
	srv.Pullable(ModelSpec{Name: "llama3.2:1b", Capabilities: []string{"completion", "tools"}, ContextLength: 131072, Family: "llama"},
		PullSpec{Layers: []int64{1000, 10}, Steps: 2})
	srv.On().Reply(et.Text("pulled and ready"))
	hi := api.ChatRequest{Model: "llama3.2:1b", Messages: []api.Message{user("hi")}}
	if r := send(t, srv.URL, "/api/chat", hi); r.status != 404 {
		t.Fatalf("chat before the pull: %d %s", r.status, r.body)
	}

	status, ls := pull(t, srv.URL, `{"model":"llama3.2:1b"}`)
	if status != 200 || len(ls) != 10 {
		t.Fatalf("%d %q", status, ls)
	}
	if ls[0] != `{"status":"pulling manifest"}` || ls[7] != `{"status":"verifying sha256 digest"}` || ls[8] != `{"status":"writing manifest"}` || ls[9] != `{"status":"success"}` {
		t.Errorf("status lines: %q", ls)
	}
	for layer, size := range []int64{1000, 10} {
		var completed []int64
		var digest string
		for _, l := range ls[1+3*layer : 4+3*layer] {
			p := progressOf(t, l)
			if p.Total != size || len(p.Digest) != len("sha256:")+64 || p.Status != "pulling "+p.Digest[7:19] {
				t.Errorf("layer %d line %s", layer, l)
			}
			if digest != "" && p.Digest != digest {
				t.Errorf("layer %d changed digest: %s", layer, l)
			}
			digest = p.Digest
			completed = append(completed, p.Completed)
		}
		if !slices.Equal(completed, []int64{0, size / 2, size}) {
			t.Errorf("layer %d completed %v", layer, completed)
		}
	}
	if strings.Contains(ls[1], "completed") {
		t.Errorf("a zero completed is left out, as on the wire: %s", ls[1])
	}

	// Now the server has it.
	if r := send(t, srv.URL, "/api/chat", hi); r.content != "pulled and ready" {
		t.Errorf("chat after the pull: %d %s", r.status, r.body)
	}
	_, _, body := post(t, srv.URL, "/api/show", `{"model":"llama3.2:1b"}`)
	if !strings.Contains(body, `"llama.context_length":131072`) {
		t.Errorf("show: %s", body)
	}
	resp, err := http.Get(srv.URL + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	var list api.ListResponse
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Models) != 1 || list.Models[0].Name != "llama3.2:1b" || list.Models[0].Size != 1010 || time.Since(list.Models[0].ModifiedAt) > time.Minute {
		t.Errorf("tags = %+v", list.Models)
	}

	// Pulling it again finds every layer complete.
	_, ls = pull(t, srv.URL, `{"model":"llama3.2:1b","stream":true}`)
	if len(ls) != 6 || progressOf(t, ls[1]).Completed != 1000 || progressOf(t, ls[2]).Completed != 10 || ls[5] != `{"status":"success"}` {
		t.Errorf("second pull: %q", ls)
	}
	if rec := lastRequest(t, srv); rec.Pull == nil || rec.Pull.Model != "llama3.2:1b" || rec.PullCancelled {
		t.Errorf("recorded %+v", rec)
	}
}

func TestPullErrorsAreTheRealServers(t *testing.T) {
	srv := New(t)
	srv.Pullable(ModelSpec{Name: "flaky"}, PullSpec{Layers: []int64{100}, Error: "max retries exceeded: unexpected EOF"})
	srv.Pullable(ModelSpec{Name: "quiet"}, PullSpec{})

	status, ls := pull(t, srv.URL, `{"model":"no-such-model"}`)
	if status != 200 || len(ls) != 2 || ls[0] != `{"status":"pulling manifest"}` || ls[1] != `{"error":"pull model manifest: file does not exist"}` {
		t.Errorf("unknown model, streamed: %d %q", status, ls)
	}
	status, _, body := post(t, srv.URL, "/api/pull", `{"model":"no-such-model","stream":false}`)
	if status != 500 || body != `{"error":"pull model manifest: file does not exist"}` {
		t.Errorf("unknown model, not streamed: %d %s", status, body)
	}
	status, ls = pull(t, srv.URL, `{"model":"flaky"}`)
	if status != 200 || len(ls) != 3 || ls[2] != `{"error":"max retries exceeded: unexpected EOF"}` {
		t.Errorf("failing pull: %d %q", status, ls)
	}
	if _, ok := srv.lookup("flaky"); ok {
		t.Error("a failed pull installed the model")
	}
	status, _, body = post(t, srv.URL, "/api/pull", `{"model":""}`)
	if status != 400 || body != `{"error":"invalid model name"}` {
		t.Errorf("no name: %d %s", status, body)
	}
	status, _, body = post(t, srv.URL, "/api/pull", `{"name":"quiet","stream":false}`)
	if status != 200 || body != `{"status":"success"}` {
		t.Errorf("not streamed, by the older name field: %d %s", status, body)
	}
}

func TestPullCancelledMidwayIsRecorded(t *testing.T) {
	srv := New(t)
	srv.Pullable(ModelSpec{Name: "huge"}, PullSpec{Layers: []int64{1 << 40}, Steps: 10000, Interval: 5 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/pull", strings.NewReader(`{"model":"huge"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for range 3 { // the manifest line and two of progress
		if !sc.Scan() {
			t.Fatalf("stream ended early: %v", sc.Err())
		}
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !lastRequest(t, srv).PullCancelled {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled pull was not recorded")
		}
		time.Sleep(time.Millisecond)
	}
	if _, ok := srv.lookup("huge"); ok {
		t.Error("a cancelled pull installed the model")
	}
}
