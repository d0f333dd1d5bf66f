package store

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asdine/storm/v3"
)

// The queue carries the writes a person must never lose: a chat message,
// a session's creation, the end of a task run. The caller hands a write
// over and goes on (a reply keeps streaming, a run keeps going); the
// queue's one goroutine applies the writes in the order they came, each
// in its own transaction, and retries one that cannot get the file until
// it lands.
//
// A write that does not land at the first try is also appended to a
// journal file beside the database (with every write after it, so the
// order survives). The journal is removed when the queue is empty again.
// If the process stops first (the person quits after a long wait, a kill,
// a crash), the journal stays, and the next jarvis that starts a queue on
// the same database imports it. A journaled write records its key in the
// database in the same transaction, so a write that landed just before a
// crash is not applied twice.

// Op is one write. Kind names the function that applies it (RegisterOp);
// Data is its payload, which that function decodes. Ops are values so
// that they can be written to the journal and applied by another process.
type Op struct {
	Kind string          `json:"kind"`
	Key  string          `json:"key"`
	Data json.RawMessage `json:"data"`
	// What says what the write is, for messages ("a message of session
	// 20261201-ab").
	What string `json:"what,omitempty"`

	journaled bool
}

// OpFunc applies an op's data in a read-write transaction.
type OpFunc func(n storm.Node, data json.RawMessage) error

var (
	opsMu sync.RWMutex
	ops   = map[string]OpFunc{}
)

// RegisterOp makes kind appliable. Packages that queue writes register
// their kinds in init, so a process that imports them can apply the
// journal of any other.
func RegisterOp(kind string, fn OpFunc) {
	opsMu.Lock()
	defer opsMu.Unlock()
	if _, dup := ops[kind]; dup {
		panic("store: op kind registered twice: " + kind)
	}
	ops[kind] = fn
}

func opFunc(kind string) (OpFunc, bool) {
	opsMu.RLock()
	defer opsMu.RUnlock()
	fn, ok := ops[kind]
	return fn, ok
}

// NewOp builds an op of kind from data (any JSON-encodable value).
func NewOp(kind, what string, data any) (Op, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return Op{}, fmt.Errorf("cannot queue %s: %w", what, err)
	}
	return Op{Kind: kind, Key: newKey(), Data: b, What: what}, nil
}

func newKey() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// QueueState is what a person may want to see about the queue.
type QueueState struct {
	// Pending counts the writes not yet in the database.
	Pending int
	// Waiting is true while the first of them cannot get the file.
	Waiting bool
	// Holder says who holds the file when Waiting ("pid 4242, memory
	// index"), when known.
	Holder string
	// Err, in the state told when it happened, is a write that failed
	// for good (not for want of the file): it was kept in the recovery
	// directory, and Err says where.
	Err error
}

// Timing of the queue's attempts.
const (
	// firstTry is how long the first attempt of a write waits for the
	// file before the write is journaled.
	firstTry = time.Second
	// retryPause separates two failed attempts.
	retryPause = 50 * time.Millisecond
)

// Queue applies ops in order in the background. Get it with DB.Queue.
type Queue struct {
	db *DB

	mu       sync.Mutex
	ops      []Op
	wake     chan struct{}
	idle     chan struct{} // closed while nothing is pending
	journal  *os.File
	onChange []func(QueueState)
	state    QueueState
	notifyMu sync.Mutex
	stop     chan struct{}
	stopOnce sync.Once
	stopped  chan struct{}
}

// Queue returns the database's write queue, starting it (and importing
// the journals left by processes that stopped with writes pending) on
// first use.
func (d *DB) Queue() *Queue {
	d.queueOnce.Do(func() {
		q := &Queue{db: d, wake: make(chan struct{}, 1), idle: make(chan struct{}), stop: make(chan struct{}), stopped: make(chan struct{})}
		close(q.idle)
		d.mu.Lock()
		d.queue = q
		d.mu.Unlock()
		q.importOrphans()
		go q.loop()
	})
	return d.queue
}

// Flush waits for the writes this process queued, if it queued any (see
// Queue.Flush).
func (d *DB) Flush(ctx context.Context) error {
	d.mu.Lock()
	q := d.queue
	d.mu.Unlock()
	if q == nil {
		return nil
	}
	return q.Flush(ctx)
}

// Enqueue hands writes over; they land in order, after every write
// enqueued before them.
func (q *Queue) Enqueue(list ...Op) {
	if len(list) == 0 {
		return
	}
	q.mu.Lock()
	if len(q.ops) == 0 {
		q.idle = make(chan struct{})
	}
	q.ops = append(q.ops, list...)
	if q.journal == nil && q.isStopped() {
		// After Close nothing applies them: they go to the journal for
		// the next process.
		q.startJournal()
	} else if q.journal != nil {
		q.writeJournal(q.ops[len(q.ops)-len(list):])
	}
	q.state.Pending = len(q.ops)
	q.mu.Unlock()
	q.publish(nil)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// OnChange adds a function told of every change of the queue's state, on
// the queue's goroutine or the enqueuing one; it must not block.
func (q *Queue) OnChange(fn func(QueueState)) {
	q.mu.Lock()
	q.onChange = append(q.onChange, fn)
	q.mu.Unlock()
}

// State returns the queue's state now.
func (q *Queue) State() QueueState {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.state
}

// Flush waits until every write enqueued so far has landed, or ctx ends.
// Readers that must see their own process's writes (an export, a reload)
// flush first.
func (q *Queue) Flush(ctx context.Context) error {
	for {
		q.mu.Lock()
		idle, n := q.idle, len(q.ops)
		q.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return &PendingError{Pending: n, Journal: q.journalPath()}
		}
	}
}

// PendingError says writes are still waiting for the file, and where they
// are kept if the process stops now.
type PendingError struct {
	Pending int
	Journal string
}

func (e *PendingError) Error() string {
	what := "1 write"
	if e.Pending != 1 {
		what = strconv.Itoa(e.Pending) + " writes"
	}
	return fmt.Sprintf("%s could not reach the database yet; they are kept in %s and will be saved the next time jarvis starts", what, e.Journal)
}

// Close stops the queue after waiting up to ctx for the pending writes. The
// writes left are in the journal (a *PendingError says how many and
// where), for the next process to import.
func (q *Queue) Close(ctx context.Context) error {
	err := q.Flush(ctx)
	q.stopOnce.Do(func() { close(q.stop) })
	q.mu.Lock()
	unjournaled := q.journal == nil && len(q.ops) > 0
	q.mu.Unlock()
	if err == nil || unjournaled {
		// Idle, or in a first attempt that ends within firstTry: the
		// loop stops, and what it left is journaled without a race with
		// an op it is applying.
		<-q.stopped
	}
	q.mu.Lock()
	if len(q.ops) > 0 && q.journal == nil {
		q.startJournal()
	}
	if q.journal != nil {
		q.journal.Close()
		q.journal = nil
	}
	q.mu.Unlock()
	return err
}

func (q *Queue) isStopped() bool {
	select {
	case <-q.stop:
		return true
	default:
		return false
	}
}

func (q *Queue) loop() {
	defer close(q.stopped)
	for {
		// A copy: Enqueue may move the slice. Only this goroutine (or Close,
		// once it has stopped) starts the journal, so the copy's journaled
		// flag stays true to the op while it is applied.
		q.mu.Lock()
		var op *Op
		if len(q.ops) > 0 {
			first := q.ops[0]
			op = &first
		}
		q.mu.Unlock()
		if op == nil {
			select {
			case <-q.wake:
				continue
			case <-q.stop:
				return
			}
		}
		err := q.apply(op)
		var locked *LockedError
		switch {
		case err == nil:
			q.landed(nil)
		case errors.As(err, &locked):
			q.waiting(locked)
			select {
			case <-q.stop:
				return
			case <-time.After(retryPause):
			}
		default:
			q.landed(q.keepFailed(*op, err))
		}
	}
}

// apply runs one op in its own transaction. A journaled op checks and
// records its key, so it is applied once even when a process stopped
// between its commit and the journal's removal.
func (q *Queue) apply(op *Op) error {
	fn, ok := opFunc(op.Kind)
	if !ok {
		return fmt.Errorf("unknown kind of write %q (written by a newer jarvis?)", op.Kind)
	}
	timeout := firstTry
	if op.journaled {
		timeout = 0
	}
	return q.db.txWithin(timeout, true, func(n storm.Node) error {
		if op.journaled {
			var at int64
			if err := n.Get(appliedBucket, op.Key, &at); err == nil {
				return nil
			}
			if err := n.Set(appliedBucket, op.Key, time.Now().Unix()); err != nil {
				return err
			}
		}
		return fn(n, op.Data)
	})
}

// appliedBucket holds the keys of journaled ops that landed.
const appliedBucket = "store_applied_ops"

// landed drops the first op; failed is set when it failed for good.
func (q *Queue) landed(failed error) {
	q.mu.Lock()
	q.ops = q.ops[1:]
	q.state.Pending, q.state.Waiting, q.state.Holder = len(q.ops), false, ""
	if len(q.ops) == 0 {
		q.ops = nil
		close(q.idle)
		q.endJournal()
	}
	q.mu.Unlock()
	q.publish(failed)
}

// waiting records that the first op could not get the file: from now on
// every pending op is journaled.
func (q *Queue) waiting(locked *LockedError) {
	q.mu.Lock()
	if q.journal == nil {
		q.startJournal()
	}
	holder := ""
	if locked.PID > 0 {
		holder = "pid " + strconv.Itoa(locked.PID)
		if locked.What != "" {
			holder += ", " + locked.What
		}
	}
	changed := !q.state.Waiting || q.state.Holder != holder
	q.state.Waiting, q.state.Holder = true, holder
	q.mu.Unlock()
	if changed {
		q.publish(nil)
	}
}

// publish tells the OnChange functions the state as it is now (with err,
// a write that failed for good). Deliveries are serialised and each one
// reads the state when it is made, so the last one told is the newest;
// q.mu is not held while they run, so a function may read the queue.
func (q *Queue) publish(err error) {
	q.notifyMu.Lock()
	defer q.notifyMu.Unlock()
	q.mu.Lock()
	st, fns := q.state, q.onChange
	q.mu.Unlock()
	st.Err = err
	for _, fn := range fns {
		fn(st)
	}
}

// The journal: one JSON op per line, in a directory beside the database.

func (q *Queue) pendingDir() string { return q.db.path + ".pending" }

func (q *Queue) journalPath() string {
	return filepath.Join(q.pendingDir(), strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(processStart.UnixNano(), 10)+".jsonl")
}

// processStart tells this process's journal from one a dead process with
// the same pid left.
var processStart = time.Now()

// startJournal writes every pending op to a new journal; q.mu is held.
func (q *Queue) startJournal() {
	if err := os.MkdirAll(q.pendingDir(), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(q.journalPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	q.journal = f
	q.writeJournal(q.ops)
}

// writeJournal appends ops and marks them journaled; q.mu is held.
func (q *Queue) writeJournal(list []Op) {
	w := bufio.NewWriter(q.journal)
	for i := range list {
		list[i].journaled = true
		b, err := json.Marshal(list[i])
		if err != nil {
			continue
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	w.Flush()
	q.journal.Sync()
}

// endJournal removes the journal once nothing is pending; q.mu is held.
func (q *Queue) endJournal() {
	if q.journal == nil {
		return
	}
	q.journal.Close()
	q.journal = nil
	os.Remove(q.journalPath())
}

// importOrphans queues the ops of journals whose process is gone, oldest
// journal first, ahead of anything this process writes. They move into
// this process's own journal before the orphan file is removed, so they
// are never only in memory.
func (q *Queue) importOrphans() {
	entries, err := os.ReadDir(q.pendingDir())
	if err != nil {
		return
	}
	mine := filepath.Base(q.journalPath())
	var files []string
	for _, e := range entries {
		name := e.Name()
		if name == mine || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		pid, _ := strconv.Atoi(strings.SplitN(name, "-", 2)[0])
		if pid != os.Getpid() && ProcessAlive(pid) {
			continue
		}
		files = append(files, name)
	}
	sort.Slice(files, func(i, j int) bool { return journalTime(files[i]) < journalTime(files[j]) })
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, name := range files {
		path := filepath.Join(q.pendingDir(), name)
		list, err := readJournal(path)
		if err != nil || len(list) == 0 {
			if err == nil {
				os.Remove(path)
			}
			continue
		}
		if len(q.ops) == 0 {
			q.idle = make(chan struct{})
		}
		q.ops = append(q.ops, list...)
		if q.journal == nil {
			q.startJournal()
		} else {
			q.writeJournal(list)
		}
		if q.journal != nil {
			os.Remove(path)
		}
	}
	q.state.Pending = len(q.ops)
}

func journalTime(name string) int64 {
	parts := strings.SplitN(strings.TrimSuffix(name, ".jsonl"), "-", 2)
	if len(parts) < 2 {
		return 0
	}
	t, _ := strconv.ParseInt(parts[1], 10, 64)
	return t
}

// readJournal reads a journal's ops; a last line cut by a crash is
// skipped (its op had not been handed over completely).
func readJournal(path string) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var list []Op
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		var op Op
		if json.Unmarshal(sc.Bytes(), &op) == nil && op.Kind != "" && op.Key != "" {
			op.journaled = true
			list = append(list, op)
		}
	}
	return list, sc.Err()
}

// keepFailed writes an op that failed for good (not for want of the file)
// to the recovery directory, so nothing the person made is thrown away,
// and returns the error that says where.
func (q *Queue) keepFailed(op Op, cause error) error {
	dir := q.db.path + ".recovery"
	path := filepath.Join(dir, "failed-"+time.Now().UTC().Format("20060102T150405")+"-"+op.Key+".json")
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		var b []byte
		b, err = json.MarshalIndent(struct {
			Op
			Error string `json:"error"`
		}{op, cause.Error()}, "", "  ")
		if err == nil {
			err = os.WriteFile(path, b, 0o600)
		}
	}
	what := op.What
	if what == "" {
		what = "a write"
	}
	if err != nil {
		return fmt.Errorf("%s could not be saved (%v), and could not be kept in %s either (%v)", what, cause, dir, err)
	}
	return fmt.Errorf("%s could not be saved (%v); it is kept in %s", what, cause, path)
}
