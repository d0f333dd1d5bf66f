package fakewire

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Core is what both stand-ins do around their handlers: listening on
// loopback (or where asked), counting the handlers running, and closing
// so that hanging replies end and Close returns once every handler has.
// The zero value is ready; Close is safe to call twice.
type Core struct {
	once    sync.Once
	closing chan struct{}
	active  sync.WaitGroup

	mu     sync.Mutex
	closed bool
	http   *http.Server
	log    io.Writer
}

func (c *Core) init() { c.once.Do(func() { c.closing = make(chan struct{}) }) }

// Listen serves h on addr (host:port; port 0 picks a free one) and
// returns the URL a client on this machine dials.
func (c *Core) Listen(addr string, h http.Handler) (string, error) {
	c.init()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	c.mu.Lock()
	c.http = srv
	c.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return "http://" + dialAddr(ln.Addr()), nil
}

// dialAddr is the address a client on this machine dials to reach a.
func dialAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

// Enter counts a handler in; false when the server is closed (answer
// 503). Pair a true with Leave.
func (c *Core) Enter() bool {
	c.init()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.active.Add(1)
	return true
}

// Leave counts a handler out.
func (c *Core) Leave() { c.active.Done() }

// Closing is closed when Close starts: waits and hangs end on it.
func (c *Core) Closing() <-chan struct{} {
	c.init()
	return c.closing
}

// Close stops the server: hanging and delayed replies end, open
// connections are closed, and Close returns once every handler has.
func (c *Core) Close() {
	c.init()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.closing)
	srv := c.http
	c.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	c.active.Wait()
}

// ClosedURL is the URL of a loopback port nothing listens on: a server
// that is not running, for "connection refused" tests.
func ClosedURL() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	url := "http://" + ln.Addr().String()
	return url, ln.Close()
}

// LogTo writes one line per request to w (nil stops logging).
func (c *Core) LogTo(w io.Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = w
}

// Log writes a request's line (see LogLine) when logging is on.
func (c *Core) Log(method, path string, status int, detail string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log != nil {
		LogLine(c.log, method, path, status, detail)
	}
}
