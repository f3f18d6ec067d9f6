package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
)

// panel evaluates every query of one dashboard panel against Prometheus,
// the panel's own expressions with the dashboard variables substituted,
// and succeeds when every query evaluates and one's result contains want:
//
//	webhook panel -dashboard deploy/grafana/driftd.json -title "Opened by rule" \
//	  -prom http://127.0.0.1:9090 -var target=.* -var window=1h -want '"rule":"MCP-DRIFT-TOOL-MISSING"'
//
// It is how the end-to-end test holds the dashboard to what a fresh
// daemon's first openings look like in a real Prometheus.
func panel(args []string, stdout io.Writer) int {
	fs := flag.NewFlagSet("panel", flag.ExitOnError)
	dashboard := fs.String("dashboard", "", "the dashboard JSON file")
	title := fs.String("title", "", "the panel's title")
	prom := fs.String("prom", "", "Prometheus base URL")
	want := fs.String("want", "", "a string one query's result must contain")
	vars := pairs{}
	fs.Var(vars, "var", "a dashboard variable, NAME=VALUE (repeatable)")
	_ = fs.Parse(args)
	if *dashboard == "" || *title == "" || *prom == "" || *want == "" {
		fmt.Fprintln(os.Stderr, "usage: webhook panel -dashboard FILE -title T -prom URL [-var k=v]... -want S")
		return 2
	}
	b, err := os.ReadFile(*dashboard)
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook panel:", err)
		return 2
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		fmt.Fprintln(os.Stderr, "webhook panel:", err)
		return 2
	}
	for _, p := range d.Panels {
		if p.Title != *title {
			continue
		}
		found := false
		for _, t := range p.Targets {
			expr := t.Expr
			for name, value := range vars {
				expr = strings.ReplaceAll(expr, "$"+name, value)
			}
			var out bytes.Buffer
			if code := get([]string{*prom + "/api/v1/query?query=" + url.QueryEscape(expr)}, &out); code != 0 {
				return code
			}
			fmt.Fprintf(stdout, "panel %q: %s\n  %s\n", *title, expr, out.String())
			found = found || strings.Contains(out.String(), *want)
		}
		if !found {
			fmt.Fprintf(os.Stderr, "panel %q: no query's result contains %s\n", *title, *want)
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "webhook panel: no panel titled %q\n", *title)
	return 2
}
