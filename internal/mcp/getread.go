package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/driftd/driftd/internal/jsonscan"
)

// ReadResult is a prompts/get or resources/read result as driftd reads
// it: the members every modern result carries, and the raw result so its
// shape can be checked. Result is what the server returned (message text,
// resource text or blob): it is checked, never copied into an artifact.
type ReadResult struct {
	ResultMeta
	Result json.RawMessage
}

// GetPrompt sends prompts/get; Mcp-Name carries the name, encoded by the
// header value rule (Client.envelope, as for tools/call). arguments may be
// nil: the request then has none.
func (s *Session) GetPrompt(ctx context.Context, name string, arguments map[string]string) (*ReadResult, *Exchange, error) {
	params := map[string]any{"name": name}
	if arguments != nil {
		params["arguments"] = arguments
	}
	return s.fetch(ctx, "prompts/get", params)
}

// ReadResource sends resources/read; Mcp-Name carries the uri, encoded by
// the header value rule.
func (s *Session) ReadResource(ctx context.Context, uri string) (*ReadResult, *Exchange, error) {
	return s.fetch(ctx, "resources/read", map[string]any{"uri": uri})
}

func (s *Session) fetch(ctx context.Context, method string, params map[string]any) (*ReadResult, *Exchange, error) {
	ex, _, err := s.c.do(ctx, call{era: s.Era, version: s.Version, method: method, params: params, sessionID: s.SessionID})
	if err != nil {
		return nil, ex, err
	}
	mems, ok := jsonscan.Members(ex.Result)
	res := &ReadResult{Result: ex.Result}
	if !ok || metaOf(mems, &res.ResultMeta) != nil {
		return nil, ex, &Error{Reason: ReasonInvalidResponse, Method: method, Err: fmt.Errorf("result is not a %s result object", method)}
	}
	return res, ex, nil
}
