package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
)

// SurfaceDigest is the digest of a served surface that an accept names
// and a baseline records (docs/security.md#baseline-approval):
// "sha256:" and the hex SHA-256 of one line per list the surface holds
// and per item in it,
//
//	LIST\n                          for each list: tools, prompts, resources, resourceTemplates
//	LIST\tKEY\tITEMHASH\n           for each item, sorted by KEY
//
// where KEY is the item's identity (a tool's, prompt's or template's name,
// a resource's uri) as a JSON string and ITEMHASH the hex SHA-256 of the
// item's definition as served, surrounding white space trimmed: the hash
// the state keeps per tool (ToolHashes). A list the server does not serve
// has no line; an empty one has its LIST line. The item hashes are
// remembered in c, the program's caches (nil: none), as the state's are.
func SurfaceDigest(c *probe.Caches, m *manifest.Manifest) string {
	h := sha256.New()
	var sum [2 * sha256.Size]byte
	line := func(list, key string, raw []byte) {
		k, _ := json.Marshal(key)
		d := digest(c, raw)
		hex.Encode(sum[:], d[:])
		h.Write([]byte(list + "\t"))
		h.Write(k)
		h.Write([]byte("\t"))
		h.Write(sum[:])
		h.Write([]byte("\n"))
	}
	if m.Declares(mcp.KindTool) {
		h.Write([]byte(mcp.KindTool.Key() + "\n"))
		tools := slices.Clone(m.Tools)
		slices.SortStableFunc(tools, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
		for _, t := range tools {
			line(mcp.KindTool.Key(), t.Name, t.Raw)
		}
	}
	for _, k := range mcp.ItemKinds {
		items, ok := m.Items[k]
		if !ok {
			continue
		}
		h.Write([]byte(k.Key() + "\n"))
		items = slices.Clone(items)
		slices.SortStableFunc(items, func(a, b mcp.Item) int { return strings.Compare(a.Key, b.Key) })
		for _, it := range items {
			line(k.Key(), it.Key, it.Raw)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
