#!/usr/bin/env bash
# The conformance suite's client-credentials-jwt scenario, with a key its
# authorization server does not know: driftd check must end as
# auth_required, exit 3, naming the refusal. The suite's verdict on the
# traffic is expected to be a failure; run.sh judges what this script
# records in $WRONG_KEY_OUT instead.
set -u
DRIFTD="${DRIFTD:-$(dirname "$0")/../../bin/driftd}"
NODE="${CONFORMANCE_NODE:-node}"
url="${*: -1}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
umask 077
"$NODE" -e 'process.stdout.write(require("crypto").generateKeyPairSync("ec", {namedCurve: "P-256"}).privateKey.export({type: "pkcs8", format: "pem"}))' > "$dir/wrong.pem"
client_id=$("$NODE" -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}").client_id || "")')
printf '{"tools":[]}' > "$dir/manifest.json"
"$DRIFTD" check "$dir/manifest.json" --base-url "$url" --timeout 20s \
  --oauth.client-id "$client_id" --oauth.private-key-file "$dir/wrong.pem" > "$dir/out" 2>&1
code=$?
{ echo "exit $code"; cat "$dir/out"; } > "${WRONG_KEY_OUT:-/dev/stderr}"
exit 0
