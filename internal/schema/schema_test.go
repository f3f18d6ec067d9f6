package schema

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		schema string
		valid  bool
	}{
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, true},
		{`{"properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"type":"string"}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{}},"properties":{"x":{"$ref":"#/definitions/a"}}}`, true},
		{`{"type":5}`, false},
		{`{"minimum":"x"}`, false},
		{`{"required":"a"}`, false},
		{`{"pattern":"("}`, false},
		{`{"$ref":"#/nope"}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"strin"}`, false},
		{`{"$schema":"https://example.invalid/meta"}`, false},
		{`{"$ref":"https://example.invalid/schema.json"}`, false},
		{strings.Repeat(`{"items":`, 65) + `{}` + strings.Repeat(`}`, 65), false},
	} {
		err := testCache.Check([]byte(tc.schema))
		if (err == nil) != tc.valid {
			t.Errorf("Check(%.60s) = %v, want valid=%v", tc.schema, err, tc.valid)
		}
	}
}

// TestCompilerNeverFetches serves a schema whose $ref and $schema point at
// a loopback listener and asserts that nothing arrives there (DESIGN §16).
func TestCompilerNeverFetches(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	base := "http://" + ln.Addr().String()
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"` + base + `/a.json"}}}`,
		`{"$schema":"` + base + `/meta","type":"object"}`,
		`{"$id":"` + base + `/root","$ref":"other.json"}`,
	} {
		_ = testCache.Check([]byte(s))
	}
	time.Sleep(50 * time.Millisecond) // let any stray connection land
	ln.Close()
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback listener: the compiler fetched a remote schema", n)
	}
}
