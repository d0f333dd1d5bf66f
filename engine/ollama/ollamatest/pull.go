package ollamatest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ollama/ollama/api"
)

// errManifestNotFound is what the real server streams when the registry
// has no such model (its PullModel wraps os.ErrNotExist).
const errManifestNotFound = "pull model manifest: file does not exist"

// PullSpec is how a Pullable model downloads. In a script file its keys
// sit beside the model's in a "pullable" entry.
type PullSpec struct {
	// Layers are the sizes in bytes of the blobs the pull fetches, in
	// order. Unset: one layer of the model's Size (1 MiB when that is
	// unset too).
	Layers []int64 `json:"layers,omitempty"`
	// Steps is how many progress lines each layer sends after its first
	// (completed 0); 4 when unset.
	Steps int `json:"steps,omitempty"`
	// Interval is the time between progress lines; 1ms when unset. In a
	// script: "interval": "50ms".
	Interval time.Duration `json:"-"`
	// Error, when set, ends the pull after the first layer's first
	// progress line with {"error": Error} in the stream, as a lost
	// registry connection does.
	Error string `json:"error,omitempty"`
}

type pullable struct {
	spec ModelSpec
	pull PullSpec
}

// Pullable makes a model available to /api/pull: it is not on the server
// (not in /api/tags, 404 on chat) until a pull of it succeeds, which
// streams progress as PullSpec says. Pulling a name that is neither
// pullable nor present streams the real server's "pull model manifest:
// file does not exist". Pulling a model the server has succeeds at once
// (its layers are already complete). It panics on a spec whose Template
// does not parse, as AddModel does.
func (s *Server) Pullable(m ModelSpec, p PullSpec) *Server {
	spec, err := completeSpec(m, time.Time{})
	if err != nil {
		panic("ollamatest: pullable model " + spec.Name + ": " + err.Error())
	}
	if len(p.Layers) == 0 {
		p.Layers = []int64{cmp.Or(m.Size, 1<<20)}
	}
	if spec.Size == 0 {
		for _, l := range p.Layers {
			spec.Size += l
		}
	}
	if p.Steps <= 0 {
		p.Steps = 4
	}
	if p.Interval <= 0 {
		p.Interval = time.Millisecond
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pullable[spec.Name] = pullable{spec: spec, pull: p}
	return s
}

// handlePull answers /api/pull as the real PullHandler does: progress
// lines as NDJSON (or, with "stream": false, the last of them, and an
// error as a 500), an error after the first line as an {"error": ...}
// line of the 200 stream.
func (s *Server) handlePull(w http.ResponseWriter, r *http.Request, rec *Request) {
	var req api.PullRequest
	if err := decode(rec.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.record(func() { rec.Pull = &req })
	//lint:ignore SA1019 older clients still send "name", and the real server accepts it
	name := normalizeName(cmp.Or(req.Model, req.Name))
	if name == "" {
		writeError(w, http.StatusBadRequest, "invalid model name")
		return
	}
	pl := &progressWriter{w: w, rc: http.NewResponseController(w), stream: req.Stream == nil || *req.Stream}
	s.mu.Lock()
	src, known := s.pullable[name]
	have, present := s.lookupLocked(name)
	s.mu.Unlock()
	if present && !known {
		src = pullable{spec: have, pull: PullSpec{Layers: []int64{cmp.Or(have.Size, 1<<20)}}}
	}
	cancelled := func() { s.record(func() { rec.PullCancelled = true }) }
	if !pl.send(api.ProgressResponse{Status: "pulling manifest"}) {
		cancelled()
		return
	}
	if !known && !present {
		pl.fail(errManifestNotFound)
		return
	}
	for i, size := range src.pull.Layers {
		d := layerDigest(name, i)
		progress := api.ProgressResponse{Status: "pulling " + d[:12], Digest: "sha256:" + d, Total: size}
		if present {
			progress.Completed = size
			if !pl.send(progress) {
				cancelled()
				return
			}
			continue
		}
		for k := 0; k <= src.pull.Steps; k++ {
			if k > 0 && !s.pause(r, src.pull.Interval) {
				cancelled()
				return
			}
			progress.Completed = size * int64(k) / int64(src.pull.Steps)
			if !pl.send(progress) {
				cancelled()
				return
			}
			if i == 0 && k == 0 && src.pull.Error != "" {
				pl.fail(src.pull.Error)
				return
			}
		}
	}
	for _, status := range []string{"verifying sha256 digest", "writing manifest"} {
		if !pl.send(api.ProgressResponse{Status: status}) {
			cancelled()
			return
		}
	}
	if !present {
		spec := src.spec
		spec.ModifiedAt = time.Now().UTC().Truncate(time.Second)
		s.mu.Lock()
		s.putModelLocked(&spec)
		s.mu.Unlock()
	}
	pl.send(api.ProgressResponse{Status: "success"})
	pl.done()
}

// pause waits d; false when the client went away or the server closed.
func (s *Server) pause(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.core.Closing():
	}
	return false
}

// layerDigest is a stable stand-in for a blob's sha256.
func layerDigest(model string, i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s#%d", model, i))
	return hex.EncodeToString(sum[:])
}

// progressWriter writes pull progress streamed, or keeps the last line
// for a "stream": false answer.
type progressWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	stream  bool
	started bool
	last    api.ProgressResponse
}

// send writes one progress line; false when the client has gone.
func (p *progressWriter) send(r api.ProgressResponse) bool {
	if !p.stream {
		p.last = r
		return true
	}
	if !p.started {
		p.w.Header().Set("Content-Type", "application/x-ndjson")
		p.w.WriteHeader(http.StatusOK)
		p.started = true
	}
	b, _ := json.Marshal(r)
	if _, err := p.w.Write(append(b, '\n')); err != nil {
		return false
	}
	return p.rc.Flush() == nil
}

// fail ends the pull with an error: a line of the stream once it has
// begun, a 500 when not streaming (the real server has no status for it).
func (p *progressWriter) fail(msg string) {
	if !p.stream || !p.started {
		writeError(p.w, http.StatusInternalServerError, msg)
		return
	}
	b, _ := json.Marshal(map[string]string{"error": msg})
	_, _ = p.w.Write(append(b, '\n'))
}

// done sends the answer of a "stream": false pull.
func (p *progressWriter) done() {
	if !p.stream {
		writeJSON(p.w, http.StatusOK, p.last)
	}
}
