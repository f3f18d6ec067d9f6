// Package toolset names the tool sets the benchmark server serves and the
// harness declares, so the two processes agree without talking: set s of n
// tools is benchgen's tools 1000·s … 1000·s+n−1, all distinct. Set 0 is
// exactly benchgen.Tools(n) and benchgen.Manifest(n).
package toolset

import (
	"bytes"
	"encoding/json"

	"github.com/driftd/driftd/internal/benchgen"
)

// stride separates the sets' tool indexes; no set has this many tools.
const stride = 1000

// Tools returns set s of n tools as served (declared, unchanged).
func Tools(s, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = benchgen.Tool(s*stride+i, false)
	}
	return out
}

// Manifest returns the manifest document declaring set s of n tools.
func Manifest(s, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i, t := range Tools(s, n) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(t)
	}
	b.WriteString("]}")
	return b.Bytes()
}
