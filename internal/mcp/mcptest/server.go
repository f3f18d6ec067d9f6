package mcptest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// EndpointPath is the MCP endpoint of a Server.
const EndpointPath = "/mcp"

// Server is a Handler listening on 127.0.0.1 at EndpointPath. Requests to
// other paths get 404 and are logged too (e.g. a followed redirect).
type Server struct {
	// URL is the full endpoint URL, http://127.0.0.1:PORT/mcp.
	URL string
	*Handler

	ts   *httptest.Server
	once sync.Once

	connMu sync.Mutex
	open   map[net.Conn]bool
}

// NewServer starts a Server on a loopback port chosen by the kernel.
func NewServer(opts Options) *Server {
	h := NewHandler(opts)
	h.endpoint = EndpointPath
	s := &Server{Handler: h, open: map[net.Conn]bool{}}
	s.ts = httptest.NewUnstartedServer(h)
	s.ts.Config.ConnState = s.track
	s.ts.Start()
	s.URL = s.ts.URL + EndpointPath
	return s
}

func (s *Server) track(c net.Conn, state http.ConnState) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	switch state {
	case http.StateNew:
		s.open[c] = true
	case http.StateClosed, http.StateHijacked:
		// A hijacked connection is the handler's: the mock closes every one
		// it takes (FaultHangUp).
		delete(s.open, c)
	}
}

// OpenConns is the number of client connections the server holds open,
// idle ones included: a client that released everything leaves 0.
func (s *Server) OpenConns() int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return len(s.open)
}

// WaitConnsClosed waits up to d for OpenConns to reach 0 and returns the
// last count seen. The server notices a client's close asynchronously.
func (s *Server) WaitConnsClosed(d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := s.OpenConns()
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitConnClosed waits up to d for the client connection with index conn
// (Request.Conn) to close, and reports whether it did.
func (s *Server) WaitConnClosed(conn int, d time.Duration) bool {
	s.mu.Lock()
	var addr string
	for a, n := range s.conns {
		if n == conn {
			addr = a
		}
	}
	s.mu.Unlock()
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		s.connMu.Lock()
		open := false
		for c := range s.open {
			open = open || c.RemoteAddr().String() == addr
		}
		s.connMu.Unlock()
		if !open {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// BaseURL is the server root, http://127.0.0.1:PORT.
func (s *Server) BaseURL() string { return s.ts.URL }

// Close ends every stream, waits for the handlers and stops the server. A
// handler blocked writing to a client that no longer reads is cut loose by
// closing the client connections after a grace period.
func (s *Server) Close() {
	s.once.Do(func() {
		s.Handler.shutdown()
		if !s.Handler.idle(250 * time.Millisecond) {
			s.ts.CloseClientConnections()
		}
		s.ts.Close()
	})
}
