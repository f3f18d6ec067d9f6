#!/usr/bin/env bash
# The conformance suite's client command for surface_test.go: it records
# what `driftd check` reports about a scenario's authorization surface.
# The suite appends the mock server's URL. The mock refuses every request
# without a token, so `driftd capture` has nothing to write; check runs
# against an empty manifest instead and still does the surface discovery
# a refusal triggers. Into $DRIFTD_SURFACE_DIR go the URL, the JSON
# report, driftd's stderr and exit status. driftd's exit status (3: the
# server asked for authorization) is the test's to read, and the suite
# judges only the traffic, so this script always exits 0.
set -u
dir="${DRIFTD_SURFACE_DIR:?set by surface_test.go}"
url="${*: -1}"
printf '%s\n' "$url" >"$dir/url"
printf '{"tools":[]}\n' >"$dir/manifest.json"
"${DRIFTD:?set by surface_test.go}" check "$dir/manifest.json" --base-url "$url" --timeout 20s \
  --format json -o "$dir/report.json" 2>"$dir/stderr"
echo $? >"$dir/exit"
exit 0
