// Package jsonscan is what driftd keeps of JSON beside encoding/json, the
// one parser of untrusted bytes: an Index of where encoding/json's decoder
// found each value of a document (so the SARIF output can map a pointer to
// a line and the poison scan can walk a definition's texts), Decode
// and one-level Members/Elements/Unquote with driftd's depth bound and
// errors, RFC 6901 pointer token escaping, and Sum, the process-seeded
// digest of a value's bytes that caches and comparisons key on. Nothing
// here reads JSON syntax itself.
package jsonscan
