package schema

import "testing"

// The keyword switch, the keyword list and the bound list are three
// spellings of one table; they must agree.
func TestKeywordTable(t *testing.T) {
	for i, k := range objKeywords {
		if got := keywordOf([]byte(k)); got != keyword(i) {
			t.Errorf("keywordOf(%q) = %d, want %d", k, got, i)
		}
	}
	for i, k := range boundKeys {
		if objKeywords[kwBounds+keyword(i)] != k {
			t.Errorf("bound %q is not at kwBounds+%d", k, i)
		}
	}
	if keywordOf([]byte("$ref")) != -1 || keywordOf([]byte("Type")) != -1 {
		t.Error("keywordOf knows a keyword the diff does not locate")
	}
}
