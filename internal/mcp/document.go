package mcp

import (
	"context"
	"io"
	"net/http"
)

// Document is a small JSON document fetched with GET: an authorization
// metadata document (RFC 9728, RFC 8414, OpenID discovery).
type Document struct {
	// Status is the HTTP status.
	Status int
	// Body is the body of a 200 answer, nil for any other status.
	Body []byte
}

// GetDocument fetches rawURL with GET through hc, which must be an
// anonymous client that follows no redirects (a 3xx is returned as its
// status, never followed). The body of a 200 answer is read up to limit
// bytes, drawn from budget like every MCP response's; a longer one fails
// with response_too_large. The error never quotes the URL: a URL a server
// handed out may carry anything in its query.
func GetDocument(ctx context.Context, hc *http.Client, rawURL string, limit int64, budget *Budget) (*Document, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, &Error{Reason: ReasonConfig, Detail: "not a URL"}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, transportError(err)
	}
	defer release(resp)
	doc := &Document{Status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		return doc, nil
	}
	body, err := io.ReadAll(&limitedReader{r: resp.Body, n: limit, budget: budget})
	if err != nil {
		return doc, &Error{Reason: Classify(err), Status: resp.StatusCode, Err: err}
	}
	doc.Body = body
	return doc, nil
}
