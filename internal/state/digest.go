package state

import (
	"crypto/sha256"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/memo"
)

// The state records each served tool by the SHA-256 of its definition
// (ToolHashes), written to disk, so the hash must be the same in every
// process. A daemon hashes every served definition every run, and a
// target's definitions are almost always the ones it served last time, or
// another replica's: SHA-256 of them was 3 % of the 10,000-target
// benchmark's CPU. digests remembers the SHA-256 of a definition under its
// jsonscan.Sum, which reads six times as fast: 32,768 definitions at most,
// some 80 bytes each.
var digests = memo.New[jsonscan.Sum](32768*digestWeight, func([sha256.Size]byte) int { return digestWeight })

const digestWeight = 80

// digest is sha256.Sum256(b) through the memo.
func digest(b []byte) [sha256.Size]byte {
	return digests.Do(jsonscan.SumOf(b), func() [sha256.Size]byte { return sha256.Sum256(b) })
}
