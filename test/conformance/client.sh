#!/usr/bin/env bash
# driftd as the official conformance suite's client. The suite appends the
# scenario server's URL. driftd does what it does against any server:
# capture the served tools, then check the server against that manifest
# with a planned and executed tools/call of every declared tool (the
# server is on loopback, so it classifies as local and --execute is
# allowed). Where the scenario names the arguments of a call
# (MCP_CONFORMANCE_CONTEXT toolCalls), they go in with --invoke-arguments
# and are checked against the declared schema like generated ones. Exit status is the suite's to judge from the traffic, so this
# script always exits 0; driftd's own output goes to stderr for the log.
set -u
DRIFTD="${DRIFTD:-$(dirname "$0")/../../bin/driftd}"
NODE="${CONFORMANCE_NODE:-node}"
url="${*: -1}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A machine-client auth scenario hands over the credential in its
# context: driftd gets it the way an operator gives it, as files (0600)
# and flags (docs/authentication.md).
oauth=()
ctx_get() { "$NODE" -e 'const v = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}")[process.argv[1]]; if (typeof v === "string") process.stdout.write(v)' "$1"; }
umask 077
case "${MCP_CONFORMANCE_SCENARIO:-}" in
auth/client-credentials-*|auth/wif-jwt-bearer|auth/enterprise-managed-authorization)
  # A machine identity (issue 37).
  if [ -n "$(ctx_get client_id)" ]; then oauth+=(--oauth.client-id "$(ctx_get client_id)"); fi
  if [ -n "$(ctx_get client_secret)" ]; then ctx_get client_secret > "$dir/secret"; oauth+=(--oauth.client-secret-file "$dir/secret"); fi
  if [ -n "$(ctx_get private_key_pem)" ]; then
    ctx_get private_key_pem > "$dir/key.pem"; oauth+=(--oauth.private-key-file "$dir/key.pem")
    [ -n "$(ctx_get signing_algorithm)" ] && oauth+=(--oauth.signing-algorithm "$(ctx_get signing_algorithm)")
  fi
  if [ -n "$(ctx_get valid_jwt)" ]; then ctx_get valid_jwt > "$dir/assertion.jwt"; oauth+=(--oauth.assertion-file "$dir/assertion.jwt"); fi
  if [ -n "$(ctx_get idp_id_token)" ]; then
    ctx_get idp_id_token > "$dir/id-token.jwt"
    oauth+=(--oauth.token-exchange.token-url "$(ctx_get idp_token_endpoint)" --oauth.token-exchange.client-id "$(ctx_get idp_client_id)"
      --oauth.token-exchange.subject-token-file "$dir/id-token.jwt")
  fi
  ;;
auth/*)
  # A person's login (issue 38): the suite's authorization server
  # approves at once, so driftd follows the redirect itself; capture logs
  # in and saves the session, check uses (and refreshes) it.
  oauth+=(--oauth.login-follow --oauth.session-file "$dir/session.json")
  if [ -n "$(ctx_get client_id)" ]; then oauth+=(--oauth.client-id "$(ctx_get client_id)"); fi
  if [ -n "$(ctx_get client_secret)" ]; then ctx_get client_secret > "$dir/secret"; oauth+=(--oauth.client-secret-file "$dir/secret"); fi
  # basic-cimd: the client ID metadata document the client "hosts" is the
  # suite's fixture URL.
  [ "${MCP_CONFORMANCE_SCENARIO}" = auth/basic-cimd ] && oauth+=(--oauth.client-metadata-url https://conformance-test.local/client-metadata.json)
  ;;
esac
"$DRIFTD" capture --base-url "$url" --output "$dir/manifest.json" --timeout 20s "${oauth[@]}" >&2 || true
invoke=()
if [ -s "$dir/manifest.json" ]; then
  while IFS= read -r name; do
    [ -n "$name" ] && invoke+=(--invoke-tool "$name")
  done < <("$NODE" -e 'for (const t of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).tools || []) console.log(t.name)' "$dir/manifest.json")
fi
while IFS= read -r arg; do
  [ -n "$arg" ] && invoke+=(--invoke-arguments "$arg")
done < <("$NODE" -e 'const c = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}"); for (const t of c.toolCalls || []) if (t.arguments) console.log(t.name + "=" + JSON.stringify(t.arguments))')
"$DRIFTD" check "$dir/manifest.json" --base-url "$url" --timeout 20s "${oauth[@]}" "${invoke[@]}" --execute >&2 || true
exit 0
