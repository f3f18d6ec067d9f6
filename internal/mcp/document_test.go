package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGetDocument: a 200 body is read within its limit and drawn from the
// run's budget; a redirect is returned, not followed; an error does not
// quote the URL.
func TestGetDocument(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc":
			w.Write([]byte(`{"issuer":"x"}`))
		case "/moved":
			http.Redirect(w, r, "/doc", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	ctx := context.Background()

	budget := NewBudget(100, nil)
	doc, err := GetDocument(ctx, hc, srv.URL+"/doc", 1024, budget)
	if err != nil || doc.Status != 200 || string(doc.Body) != `{"issuer":"x"}` || budget.left.Load() != 100-14 {
		t.Fatalf("doc %+v, %v, budget left %d", doc, err, budget.left.Load())
	}
	if doc, err = GetDocument(ctx, hc, srv.URL+"/moved", 1024, nil); err != nil || doc.Status != http.StatusFound || doc.Body != nil {
		t.Fatalf("a redirect: %+v, %v", doc, err)
	}
	if doc, err = GetDocument(ctx, hc, srv.URL+"/missing", 1024, nil); err != nil || doc.Status != http.StatusNotFound {
		t.Fatalf("a 404: %+v, %v", doc, err)
	}
	if _, err = GetDocument(ctx, hc, srv.URL+"/doc", 10, nil); Classify(err) != ReasonResponseTooLarge {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err = GetDocument(ctx, hc, srv.URL+"/doc", 1024, NewBudget(5, nil)); Classify(err) != ReasonResponseTooLarge {
		t.Fatalf("over the budget: %v", err)
	}
	_, err = GetDocument(ctx, hc, "http://127.0.0.1:1/doc?key=MARKER", 1024, nil)
	if err == nil || strings.Contains(err.Error(), "MARKER") {
		t.Fatalf("an unreachable URL: %v", err)
	}
}
