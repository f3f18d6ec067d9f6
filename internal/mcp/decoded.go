package mcp

import (
	"encoding/json"

	"golang.org/x/sync/singleflight"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/memo"
)

// Decoded remembers what response bodies and tools/list results decoded
// to, under a jsonscan.Sum of their bytes: a daemon's target nearly
// always answers what it answered last run, and a fleet's replicas
// answer each other's bytes, so encoding/json — a listing's whole cost
// once it is the one parser — runs once per distinct answer, not once per
// run. A body is still read whole and summed (its bytes are the key);
// only the decoding is skipped. Only answers that decoded are kept, and
// only by their owner (probe.Caches): a nil *Decoded decodes every time.
//
// Bytes being decoded are decoded once however many callers ask at once
// (singleflight): a run's second connection asks what its first asked,
// with the same ids (Client.StartIDsAfter), and a server that answers
// both alike sends the same bytes at the same moment. A fleet of
// distinct servers, whose answers no memo of a sane size holds from one
// run to the next, then decodes each answer once a run, not twice.
type Decoded struct {
	responses *memo.Memo[jsonscan.Sum, response]
	pages     *memo.Memo[jsonscan.Sum, *decodedPage]
	flight    singleflight.Group
}

// decodedPage is a tools/list result, decoded, shared by every caller
// whose result had its bytes: read only.
type decodedPage struct {
	tools  []json.RawMessage
	parsed []Tool
	meta   ResultMeta
	next   *json.RawMessage
}

// perEntry is an entry's key, map slot and headers, rounded up.
const perEntry = 160

// NewDecoded returns memos of decoded bodies and pages within budget
// bytes, half each.
func NewDecoded(budget int) *Decoded {
	return &Decoded{
		responses: memo.New[jsonscan.Sum](budget/2, func(r response) int {
			return perEntry + len(r.JSONRPC) + len(r.ID) + len(r.Result) + len(r.Error)
		}),
		pages: memo.New[jsonscan.Sum](budget/2, func(p *decodedPage) int {
			// The raw definitions and the parsed tools' members are copies
			// of the result's bytes: about twice them, and a Tool each.
			w := perEntry
			for _, t := range p.tools {
				w += 2*len(t) + 256
			}
			return w
		}),
	}
}

// response is decodeResponse through the memo; sum is b's.
func (d *Decoded) response(b []byte, sum jsonscan.Sum) (*response, error) {
	if d == nil {
		return decodeResponse(b)
	}
	if r, ok := d.responses.Get(sum); ok {
		return &r, nil
	}
	v, err, _ := d.flight.Do("r"+string(sum[:]), func() (any, error) {
		r, err := decodeResponse(b)
		if err == nil {
			d.responses.Put(sum, *r)
		}
		return r, err
	})
	if err != nil {
		return nil, err
	}
	r := *v.(*response) // each caller its own copy, as from the memo
	return &r, nil
}

// page decodes a tools/list result into p, through the memo; ok is false
// when result does not have the ListToolsResult shape.
func (d *Decoded) page(result json.RawMessage) (*decodedPage, bool) {
	if d == nil {
		p := decodePage(result)
		return p, p != nil
	}
	sum := jsonscan.SumOf(result)
	if p, ok := d.pages.Get(sum); ok {
		return p, true
	}
	v, _, _ := d.flight.Do("p"+string(sum[:]), func() (any, error) {
		p := decodePage(result)
		if p != nil {
			d.pages.Put(sum, p)
		}
		return p, nil
	})
	p := v.(*decodedPage)
	return p, p != nil
}

// decodePage decodes a tools/list result; nil when it does not have the
// ListToolsResult shape.
func decodePage(result json.RawMessage) *decodedPage {
	var raw listResult
	if json.Unmarshal(result, &raw) != nil || raw.Tools == nil {
		return nil
	}
	p := &decodedPage{tools: *raw.Tools, meta: raw.ResultMeta, next: raw.NextCursor, parsed: make([]Tool, len(*raw.Tools))}
	for i, t := range p.tools {
		p.parsed[i], _ = ParseTool(t)
	}
	return p
}

// Used is the bytes d accounts for; Budget bounds it.
func (d *Decoded) Used() int {
	if d == nil {
		return 0
	}
	return d.responses.Used() + d.pages.Used()
}

// Budget is the bytes d may keep.
func (d *Decoded) Budget() int {
	if d == nil {
		return 0
	}
	return d.responses.Budget() + d.pages.Budget()
}

// Reset forgets everything, so a benchmark can measure the cold path.
func (d *Decoded) Reset() {
	if d == nil {
		return
	}
	d.responses.Reset()
	d.pages.Reset()
}
