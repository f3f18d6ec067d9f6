// Command webhook is the end-to-end test's helper (deploy/e2e/run.sh): an
// Alertmanager webhook receiver that records every alert it is sent, a
// matcher over what it recorded, and a bounded HTTP GET (so the script
// needs neither curl nor jq).
//
//	webhook serve -listen 127.0.0.1:PORT -out FILE
//	webhook match -in FILE -status firing -label alertname=X -label k=v [-annotation k=v]
//	webhook get URL
//	webhook panel -dashboard FILE -title T -prom URL [-var k=v]... -want S
//
// serve appends one JSON object per received alert to FILE, one per line:
// {"received_at", "receiver", "status", "labels", "annotations", "starts_at"}.
// match exits 0 and prints the first recorded alert that has the status
// and every label and annotation given, 1 when none does (yet), 2 on
// misuse. get prints the body of a 2xx answer and exits 0, else 1.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var code int
	switch os.Args[1] {
	case "serve":
		code = serve(os.Args[2:])
	case "match":
		code = match(os.Args[2:], os.Stdout)
	case "get":
		code = get(os.Args[2:], os.Stdout)
	case "panel":
		code = panel(os.Args[2:], os.Stdout)
	default:
		usage()
	}
	os.Exit(code)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: webhook serve -listen ADDR -out FILE | match -in FILE [-status S] [-label k=v]... [-annotation k=v]... | get URL | panel -dashboard FILE -title T -prom URL [-var k=v]... -want S")
	os.Exit(2)
}

// payload is the part of Alertmanager's webhook body (version 4) we keep.
type payload struct {
	Receiver string  `json:"receiver"`
	Alerts   []alert `json:"alerts"`
}

type alert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    string            `json:"startsAt"`
}

// record is one line of the output file.
type record struct {
	ReceivedAt  string            `json:"received_at"`
	Receiver    string            `json:"receiver"`
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    string            `json:"starts_at"`
}

func serve(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	out := fs.String("out", "", "file to append received alerts to (required)")
	_ = fs.Parse(args)
	if *out == "" {
		fmt.Fprintln(os.Stderr, "webhook serve: -out is required")
		return 2
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook serve:", err)
		return 1
	}
	defer f.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook serve:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "webhook: listening on %s, recording to %s\n", ln.Addr(), *out)
	srv := &http.Server{Handler: newHandler(f, os.Stderr), ReadHeaderTimeout: 5 * time.Second}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "webhook serve:", err)
		return 1
	}
	return 0
}

// newHandler answers GET /healthz and records the alerts of every POST.
func newHandler(out io.Writer, logw io.Writer) http.Handler {
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST an Alertmanager webhook payload", http.StatusMethodNotAllowed)
			return
		}
		var p payload
		if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&p); err != nil {
			http.Error(w, "bad payload: "+err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now().UTC().Format(time.RFC3339Nano)
		var b strings.Builder
		for _, a := range p.Alerts {
			line, err := json.Marshal(record{ReceivedAt: now, Receiver: p.Receiver, Status: a.Status,
				Labels: a.Labels, Annotations: a.Annotations, StartsAt: a.StartsAt})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			b.Write(line)
			b.WriteByte('\n')
			fmt.Fprintf(logw, "webhook: %s %s %s\n", a.Status, a.Labels["alertname"], line)
		}
		mu.Lock()
		_, err := io.WriteString(out, b.String()) // one write: whole lines for a concurrent reader
		mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	return mux
}

// pairs is a repeatable -flag k=v.
type pairs map[string]string

func (p pairs) String() string { return fmt.Sprint(map[string]string(p)) }

func (p pairs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	p[k] = v
	return nil
}

func match(args []string, stdout io.Writer) int {
	fs := flag.NewFlagSet("match", flag.ContinueOnError)
	in := fs.String("in", "", "file written by serve (required)")
	status := fs.String("status", "", "required alert status (firing, resolved); empty: any")
	labels, annotations := pairs{}, pairs{}
	fs.Var(labels, "label", "required label NAME=VALUE (repeatable)")
	fs.Var(annotations, "annotation", "required annotation NAME=VALUE (repeatable)")
	if err := fs.Parse(args); err != nil || *in == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "webhook match: -in FILE is required; labels and annotations go in -label/-annotation")
		return 2
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		return 1 // nothing received yet
	}
	for _, line := range strings.Split(string(data), "\n") {
		var r record
		if json.Unmarshal([]byte(line), &r) != nil {
			continue // empty, or a line still being written
		}
		if (*status == "" || r.Status == *status) && contains(r.Labels, labels) && contains(r.Annotations, annotations) {
			pretty, _ := json.MarshalIndent(r, "", "  ")
			fmt.Fprintln(stdout, string(pretty))
			return 0
		}
	}
	return 1
}

func contains(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func get(args []string, stdout io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: webhook get URL")
		return 2
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook get:", err)
		return 1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook get:", err)
		return 1
	}
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(os.Stderr, "webhook get %s: %s\n", args[0], resp.Status)
		return 1
	}
	_, _ = stdout.Write(body)
	return 0
}
