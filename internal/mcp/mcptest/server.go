package mcptest

import (
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
}

// NewServer starts a Server on a loopback port chosen by the kernel.
func NewServer(opts Options) *Server {
	h := NewHandler(opts)
	h.endpoint = EndpointPath
	ts := httptest.NewServer(h)
	return &Server{URL: ts.URL + EndpointPath, Handler: h, ts: ts}
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
