#!/usr/bin/env bash
# End to end, on loopback only: the whole alert path from a drifting MCP
# server to a page.
#
#   driftd demo (mock MCP server with a declared tool, cancel_order, missing)
#     -> Prometheus (scrapes driftd every 1 s, evaluates the shipped rules)
#     -> Alertmanager (routes to a webhook, group_wait 1 s)
#     -> webhook (deploy/e2e/webhook: records every alert it receives)
#
# Passes when MCPToolMissing arrives at the webhook, firing, with
# target="orders-demo", tool="cancel_order", severity="critical" and its
# runbook_url, and no DriftdNewFindings does (a first start's findings are
# not new); prints it and exits 0. Otherwise exits 1 after printing the
# logs of every process and what Prometheus and Alertmanager hold. Bounded:
# E2E_TIMEOUT seconds (120) from the first process started.
#
# Prometheus runs a copy of deploy/prometheus/alerts.yml in which every
# `for:` is 2s: the shipped durations (10m for MCPToolMissing) are right for
# production and would make this test take minutes. Everything else —
# expressions, labels, annotations — is the shipped file, and the copy is
# checked to differ from it only on `for:` lines. 2s rather than 0s keeps
# the pending -> firing step in the path.
#
# Needs bin/driftd (make build; `make e2e` does both), go, prometheus and
# prometheus-alertmanager (Debian: apt-get install prometheus
# prometheus-alertmanager). Every process and the temporary directory are
# removed on exit. Override binaries with DRIFTD, PROMETHEUS, ALERTMANAGER.
set -euo pipefail

cd "$(dirname "$0")/../.."
root=$PWD
timeout_s=${E2E_TIMEOUT:-120}
driftd=${DRIFTD:-$root/bin/driftd}
prometheus=${PROMETHEUS:-$(command -v prometheus || true)}
alertmanager=${ALERTMANAGER:-$(command -v prometheus-alertmanager || command -v alertmanager || true)}
go=${GO:-go}

log() { printf '%s e2e: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

[ -x "$driftd" ] || { log "no driftd binary at $driftd: run make build (or make e2e)"; exit 1; }
[ -n "$prometheus" ] || { log "prometheus not found (Debian: apt-get install prometheus)"; exit 1; }
[ -n "$alertmanager" ] || { log "alertmanager not found (Debian: apt-get install prometheus-alertmanager)"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/driftd-e2e.XXXXXX")
names=()
pids=()

# Stop what we started, by pid, newest first: TERM, then KILL after 10 s.
cleanup() {
  local rc=$? i pid n
  trap - EXIT INT TERM
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for ((n = 0; n < 100; n++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The helper is built, not `go run`: go run would put its own process
# between us and the server, and signals would not reach the server.
log "building deploy/e2e/webhook"
"$go" build -o "$tmp/webhook" ./deploy/e2e/webhook
helper=$tmp/webhook

# Free loopback ports, below the kernel's ephemeral range so an outgoing
# connection cannot take one between the check and the bind.
ephemeral_low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
port_hi=$((ephemeral_low > 21000 ? ephemeral_low - 1 : 30999))
taken=" "
pick_port() { # pick_port VAR
  local p i
  for ((i = 0; i < 500; i++)); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % (port_hi - 20000 + 1)))
    case $taken in *" $p "*) continue ;; esac
    if ! timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null; then
      taken+="$p "
      printf -v "$1" '%s' "$p"
      return 0
    fi
  done
  log "no free port found"
  return 1
}
pick_port driftd_port
pick_port mock_port
pick_port prom_port
pick_port am_port
pick_port hook_port

start() { # start NAME CMD...: background, output to $tmp/NAME.log
  local name=$1
  shift
  "$@" >"$tmp/$name.log" 2>&1 &
  names+=("$name")
  pids+=("$!")
  log "started $name (pid $!): $*"
}

diagnose() {
  local i
  echo "==================== diagnostics" >&2
  for ((i = 0; i < ${#names[@]}; i++)); do
    local state=exited
    if kill -0 "${pids[i]}" 2>/dev/null; then state=running; fi
    echo "-------------------- ${names[i]} (pid ${pids[i]}, $state): last 200 lines of its log" >&2
    tail -n 200 "$tmp/${names[i]}.log" >&2 || true
  done
  echo "-------------------- driftd /metrics (driftd_finding, driftd_probe_success)" >&2
  "$helper" get "http://127.0.0.1:$driftd_port/metrics" 2>&1 | grep -E '^driftd_(finding|probe_success)\{' >&2 || true
  echo "-------------------- Prometheus /api/v1/targets" >&2
  "$helper" get "http://127.0.0.1:$prom_port/api/v1/targets" >&2 2>&1 || true
  echo >&2
  echo "-------------------- Prometheus /api/v1/alerts" >&2
  "$helper" get "http://127.0.0.1:$prom_port/api/v1/alerts" >&2 2>&1 || true
  echo >&2
  echo "-------------------- Prometheus /api/v1/rules?type=alert" >&2
  "$helper" get "http://127.0.0.1:$prom_port/api/v1/rules?type=alert" >&2 2>&1 || true
  echo >&2
  echo "-------------------- Alertmanager /api/v2/alerts" >&2
  "$helper" get "http://127.0.0.1:$am_port/api/v2/alerts" >&2 2>&1 || true
  echo >&2
  echo "-------------------- webhook: received alerts" >&2
  cat "$tmp/received.jsonl" >&2 2>/dev/null || true
  echo "==================== end of diagnostics" >&2
}

fail() {
  log "FAIL: $*"
  diagnose
  exit 1
}

t0=$SECONDS
deadline=$((SECONDS + timeout_s))
elapsed() { echo "$((SECONDS - t0))s"; }

alive() { # alive: every started process still runs
  local i
  for ((i = 0; i < ${#names[@]}; i++)); do
    kill -0 "${pids[i]}" 2>/dev/null || fail "${names[i]} exited early"
  done
}

wait_until() { # wait_until WHAT CMD...: poll CMD every 0.5 s until it succeeds
  local what=$1
  shift
  until "$@" >/dev/null 2>&1; do
    alive
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${timeout_s}s waiting for $what"
    sleep 0.5
  done
  log "$what after $(elapsed)"
}

# The rules under test: the shipped file with `for:` shortened (see above).
sed -E 's/^([[:space:]]+)for:[[:space:]]+.*$/\1for: 2s/' deploy/prometheus/alerts.yml >"$tmp/alerts.yml"
if ! diff <(grep -Ev '^[[:space:]]+for:' deploy/prometheus/alerts.yml) <(grep -Ev '^[[:space:]]+for:' "$tmp/alerts.yml") >/dev/null; then
  fail "the test copy of alerts.yml differs from the shipped one beyond for: lines"
fi
grep -q 'for: 2s' "$tmp/alerts.yml" || fail "no for: lines rewritten in the test copy of alerts.yml"
if command -v promtool >/dev/null 2>&1; then
  promtool check rules "$tmp/alerts.yml" >"$tmp/promtool.log" 2>&1 || { cat "$tmp/promtool.log" >&2; fail "promtool check rules on the test copy"; }
fi

cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $tmp/alerts.yml
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:$am_port']
scrape_configs:
  - job_name: driftd
    static_configs:
      - targets: ['127.0.0.1:$driftd_port']
EOF

cat >"$tmp/alertmanager.yml" <<EOF
route:
  receiver: webhook
  group_by: ['alertname', 'target', 'tool']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: webhook
    webhook_configs:
      - url: http://127.0.0.1:$hook_port/alerts
        send_resolved: true
EOF

mkdir -p "$tmp/driftd-tmp"
: >"$tmp/received.jsonl"

start webhook "$helper" serve -listen "127.0.0.1:$hook_port" -out "$tmp/received.jsonl"
start alertmanager "$alertmanager" \
  --config.file="$tmp/alertmanager.yml" \
  --storage.path="$tmp/alertmanager-data" \
  --web.listen-address="127.0.0.1:$am_port" \
  --cluster.listen-address=
start prometheus "$prometheus" \
  --config.file="$tmp/prometheus.yml" \
  --storage.tsdb.path="$tmp/prometheus-data" \
  --web.listen-address="127.0.0.1:$prom_port"
# TMPDIR: the demo unpacks its configuration and state into a temporary
# directory; keep it inside ours so a killed demo leaves nothing behind.
start driftd env TMPDIR="$tmp/driftd-tmp" "$driftd" demo \
  --web.listen-address="127.0.0.1:$driftd_port" \
  --mock.listen-address="127.0.0.1:$mock_port"

wait_until "webhook ready" "$helper" get "http://127.0.0.1:$hook_port/healthz"
wait_until "alertmanager ready" "$helper" get "http://127.0.0.1:$am_port/-/ready"
wait_until "prometheus ready" "$helper" get "http://127.0.0.1:$prom_port/-/ready"
wait_until "driftd ready" "$helper" get "http://127.0.0.1:$driftd_port/-/ready"

finding_exported() {
  "$helper" get "http://127.0.0.1:$driftd_port/metrics" |
    grep -q '^driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders-demo",tool="cancel_order"} 1$'
}
wait_until "driftd exports the missing-tool finding" finding_exported

# A series Prometheus scraped (so the scrape works), then the alert firing.
scraped() {
  "$helper" get "http://127.0.0.1:$prom_port/api/v1/query?query=driftd_finding%7Brule%3D%22MCP-DRIFT-TOOL-MISSING%22%2Ctarget%3D%22orders-demo%22%7D" |
    grep -q '"tool":"cancel_order"'
}
wait_until "prometheus has scraped it" scraped
firing() {
  "$helper" get "http://127.0.0.1:$prom_port/api/v1/query?query=ALERTS%7Balertname%3D%22MCPToolMissing%22%2Calertstate%3D%22firing%22%2Ctarget%3D%22orders-demo%22%2Ctool%3D%22cancel_order%22%7D" |
    grep -q '"alertstate":"firing"'
}
wait_until "prometheus fires MCPToolMissing" firing

arrived() {
  "$helper" match -in "$tmp/received.jsonl" -status firing \
    -label alertname=MCPToolMissing \
    -label target=orders-demo \
    -label tool=cancel_order \
    -label severity=critical \
    -label rule=MCP-DRIFT-TOOL-MISSING \
    -annotation runbook_url=https://github.com/driftd/driftd/blob/main/docs/runbooks.md#mcptoolmissing
}
wait_until "MCPToolMissing arrives at the webhook" arrived

# A first start pages once: the demo's findings are its initial ones (a
# fresh state dir, docs/metrics.md "First start"), so their opened
# counters exist at 0 and DriftdNewFindings, which has no for: and would
# have reached the webhook before MCPToolMissing, never fires.
initial_at_zero() {
  "$helper" get "http://127.0.0.1:$prom_port/api/v1/query?query=driftd_findings_opened_total%7Btarget%3D%22orders-demo%22%2Crule%3D%22MCP-DRIFT-TOOL-MISSING%22%7D%20%3D%3D%200" |
    grep -q '"rule":"MCP-DRIFT-TOOL-MISSING"'
}
wait_until "the initial finding's opened counter is at 0" initial_at_zero
sleep 2
if "$helper" match -in "$tmp/received.jsonl" -label alertname=DriftdNewFindings; then
  fail "DriftdNewFindings fired on a first start: initial findings are not new"
fi
log "no DriftdNewFindings on the first start after $(elapsed)"

# The dashboard's panels, their own queries from the shipped dashboard,
# evaluated by this Prometheus, with every variable as Grafana sets it.
opened_resolved_panel() {
  "$helper" panel -dashboard deploy/grafana/driftd.json -title "Findings opened and resolved" \
    -prom "http://127.0.0.1:$prom_port" -var 'job=.*' -var 'target=.*' -var __rate_interval=5m \
    -want '"severity":"ERROR"'
}
wait_until "the dashboard's \"Findings opened and resolved\" shows the finding counters" opened_resolved_panel

log "PASS in $(elapsed): the webhook received"
arrived
log "every alert the webhook received (status, alertname, target, tool):"
while IFS= read -r line; do
  st=$(sed -nE 's/.*"status":"([a-z]+)".*/\1/p' <<<"$line")
  an=$(sed -nE 's/.*"alertname":"([^"]*)".*/\1/p' <<<"$line")
  tg=$(sed -nE 's/.*"target":"([^"]*)".*/\1/p' <<<"$line")
  tl=$(sed -nE 's/.*"tool":"([^"]*)".*/\1/p' <<<"$line")
  printf '  %-8s %-30s target=%-18s tool=%s\n' "$st" "$an" "$tg" "$tl"
done <"$tmp/received.jsonl"
