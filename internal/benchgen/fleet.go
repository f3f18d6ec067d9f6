package benchgen

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
)

// A fleet is what a real organisation runs: every target a different
// server with its own manifest. Target t's tool count, drawn once from its
// own seed, spreads over FleetMinTools..FleetMaxTools with a mean of about
// 30 (5 plus an exponential of mean 25, cut at 100): many small servers, a
// few large ones. About one target in FleetDriftEvery drifts: it serves
// its first tool changed (Tool's changed variant), every other target
// serves exactly its manifest. Target t's tools are benchgen's tools
// FleetBase + t·FleetMaxTools + j, so no two targets — and no target and
// the replica sets of test/bench/toolset — share a tool or a schema.
const (
	FleetMinTools   = 5
	FleetMaxTools   = 100
	FleetDriftEvery = 50
	FleetBase       = 10_000_000
)

// FleetTarget is what target t of a fleet declares and serves.
type FleetTarget struct {
	Tools    int  // tools declared and served
	Drifting bool // serves its first tool changed
}

// Fleet describes target t of the fleet; the same in every process.
func Fleet(t int) FleetTarget {
	r := rand.New(rand.NewPCG(uint64(t), 0xf1ee7))
	n := FleetMinTools + int(math.Round(r.ExpFloat64()*25))
	return FleetTarget{Tools: min(n, FleetMaxTools), Drifting: r.IntN(FleetDriftEvery) == 0}
}

// FleetTool is tool j of target t, as declared (changed false) or drifted.
func FleetTool(t, j int, changed bool) json.RawMessage {
	return Tool(FleetBase+t*FleetMaxTools+j, changed)
}

// FleetManifest is target t's manifest document: its tools, declared.
func FleetManifest(t int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for j := range Fleet(t).Tools {
		if j > 0 {
			b.WriteByte(',')
		}
		b.Write(FleetTool(t, j, false))
	}
	b.WriteString("]}")
	return b.Bytes()
}

// FleetServed is what target t serves, given its declared tools (as read
// back from FleetManifest, so a server need not generate them again): the
// same tools, the first one changed when the target drifts.
func FleetServed(t int, declared []json.RawMessage) []json.RawMessage {
	if !Fleet(t).Drifting || len(declared) == 0 {
		return declared
	}
	out := append([]json.RawMessage(nil), declared...)
	out[0] = FleetTool(t, 0, true)
	return out
}
