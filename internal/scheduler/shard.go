package scheduler

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// InShard reports whether name belongs to shard i of n (--shard I/N): the
// FNV-1a 64 hash of the name modulo n equals i. The hash is stable across
// processes and versions, so N replicas agree on the split without talking
// to each other. n <= 1 means one shard holding everything.
func InShard(name string, i, n int) bool {
	if n <= 1 {
		return true
	}
	if i < 0 || i >= n {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(name)) // a hash.Hash never returns an error
	return h.Sum64()%uint64(n) == uint64(i)
}

// ParseShard parses "I/N" with 0 <= I < N. I may also be a StatefulSet
// pod's name, "driftd-2/4": its ordinal, the digits after the last "-",
// is the index, so that the pod template says N once
// (`--shard=$(POD_NAME)/4`, docs/scaling.md).
func ParseShard(s string) (i, n int, err error) {
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("shard %q: want I/N, e.g. 0/3, or POD_NAME/N, e.g. driftd-0/3", s)
	}
	if k := strings.LastIndexByte(is, '-'); k > 0 && strings.Trim(is[:k], "abcdefghijklmnopqrstuvwxyz0123456789-.") == "" {
		is = is[k+1:] // a pod name: lowercase RFC 1123, then the ordinal
	}
	i, err = parseCount(is)
	if err != nil {
		return 0, 0, fmt.Errorf("shard %q: index: %w", s, err)
	}
	n, err = parseCount(ns)
	if err != nil {
		return 0, 0, fmt.Errorf("shard %q: count: %w", s, err)
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("shard %q: count must be at least 1", s)
	}
	if i >= n {
		return 0, 0, fmt.Errorf("shard %q: index must be below the count (shards are numbered from 0)", s)
	}
	return i, n, nil
}

// parseCount accepts plain decimal digits only: strconv.Atoi alone would
// also take "+1" and "-0".
func parseCount(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return v, nil
}
