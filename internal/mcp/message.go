package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Implementation names a client or server (clientInfo / serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// RPCError is a JSON-RPC error object. Message is server-controlled and is
// never copied into a report.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d", e.Code) }

// response is a JSON-RPC response as read off the wire, before validation.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// message classifies one decoded JSON-RPC message from the server.
type messageKind int

const (
	kindResponse messageKind = iota
	kindNotification
	kindServerRequest
)

// decodeMessage parses one JSON-RPC message with encoding/json and
// reports its kind.
//
// json.Unmarshal reads b where it is, where a json.Decoder would first
// copy it into a buffer of its own: a listing's body is the largest thing
// a run holds, and a fleet's runs in flight would hold it twice.
func decodeMessage(b []byte) (*response, messageKind, error) {
	var r response
	if err := json.Unmarshal(b, &r); err != nil {
		if trailing(b) {
			return nil, 0, errors.New("trailing data after the JSON-RPC object")
		}
		return nil, 0, fmt.Errorf("body is not a JSON-RPC object: %w", err)
	}
	return classify(&r)
}

// trailing reports whether b holds more than its first JSON value (asked
// only of a body Unmarshal refused, to say why).
func trailing(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	return dec.Decode(&v) == nil && dec.More()
}

// classify checks a decoded message's version and reports its kind.
func classify(r *response) (*response, messageKind, error) {
	if r.JSONRPC != "2.0" {
		return nil, 0, errors.New(`"jsonrpc" is not "2.0"`)
	}
	if r.Method != nil {
		if isAbsent(r.ID) {
			return r, kindNotification, nil
		}
		return r, kindServerRequest, nil
	}
	return r, kindResponse, nil
}

// isAbsent reports whether a raw member is missing or JSON null.
func isAbsent(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// checkResponse validates a response to the request with id want. It
// returns the result, or the server's error object, or why the response is
// not a valid answer at all.
func checkResponse(r *response, want int64) (json.RawMessage, *RPCError, error) {
	hasResult, hasError := !isAbsent(r.Result), !isAbsent(r.Error)
	var id int64
	if err := json.Unmarshal(r.ID, &id); err != nil || id != want {
		// A JSON-RPC error with a null id means the server could not read
		// our id; it still answers this request.
		if !(hasError && isAbsent(r.ID)) {
			return nil, nil, errors.New("response id does not match the request id")
		}
	}
	switch {
	case hasResult && hasError:
		return nil, nil, errors.New(`response has both "result" and "error"`)
	case hasError:
		rpc, err := decodeRPCError(r.Error)
		return nil, rpc, err
	case hasResult:
		if r.Result[0] != '{' {
			return nil, nil, errors.New(`"result" is not an object`)
		}
		return r.Result, nil, nil
	}
	return nil, nil, errors.New(`response has neither "result" nor "error"`)
}

func decodeRPCError(raw json.RawMessage) (*RPCError, error) {
	var shape struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &shape); err != nil {
		return nil, errors.New(`"error" is not an object`)
	}
	var e RPCError
	if err := json.Unmarshal(shape.Code, &e.Code); err != nil {
		return nil, errors.New(`"error.code" is not an integer`)
	}
	if err := json.Unmarshal(shape.Message, &e.Message); err != nil {
		return nil, errors.New(`"error.message" is not a string`)
	}
	e.Data = shape.Data
	return &e, nil
}
