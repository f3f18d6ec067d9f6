package main

import "testing"

func TestParseRing(t *testing.T) {
	page := "<h2>Log</h2>\n<pre class=\"log\">time=1 msg=&#34;a&#34;\ntime=2 msg=&#34;b&#34;\n</pre>\n"
	n, last, err := parseRing(page)
	if err != nil || n != 2 || last != `time=2 msg="b"` {
		t.Fatalf("got %d %q %v", n, last, err)
	}
	if n, _, err := parseRing(`<p class="empty">No log lines yet.</p>`); err != nil || n != 0 {
		t.Fatalf("empty: %d %v", n, err)
	}
	if _, _, err := parseRing("<html></html>"); err == nil {
		t.Fatal("a page without a log block was accepted")
	}
}
