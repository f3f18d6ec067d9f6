package jsonscan

import "testing"

func TestSumOf(t *testing.T) {
	a := SumOf([]byte(`{"type":"object"}`))
	if a != SumOf([]byte(`{"type":"object"}`)) {
		t.Fatal("the same bytes summed twice differ")
	}
	if a == SumOf([]byte(`{"type":"string"}`)) {
		t.Fatal("different bytes share a sum")
	}
	if SumOf([]byte("ab"), []byte("c")) == SumOf([]byte("a"), []byte("bc")) {
		t.Fatal("parts are not length-prefixed: (ab, c) and (a, bc) share a sum")
	}
	if SumOf(nil) == (Sum{}) || SumOf() == SumOf(nil) {
		t.Fatal("an empty value must have a non-zero sum of its own (a zero Sum means not summed)")
	}
}
