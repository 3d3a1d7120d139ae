#!/usr/bin/env bash
# Check every listener of the cluster start.sh runs with Kafka's own tools: the console's principal
# (a super user) creates, lists and deletes a topic through each; the principal without ACLs is refused;
# a client certificate that is expired, from another CA or missing is refused on the mTLS listener.
# Prints one line per check and exits non-zero if any check did not give the expected answer.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"
[[ -f $RUN_DIR/endpoints.env ]] || { echo "No $RUN_DIR/endpoints.env: run $HERE/start.sh first." >&2; exit 1; }
# shellcheck disable=SC1091
source "$RUN_DIR/endpoints.env"
export KAFKA_OPTS="$TOOLS_KAFKA_OPTS" KAFKA_HEAP_OPTS="-Xmx128m"
TOPICS=$KAFKA_HOME/bin/kafka-topics.sh
failed=0
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

run() { # $1 = label, $2 = expect ok|denied|refused, $3 = bootstrap, $4 = properties, rest = kafka-topics args
  local label=$1 expect=$2 bootstrap=$3 stem=$4 props=$CLIENT/$4.properties; shift 4
  local tool=("$TOPICS" --bootstrap-server "$bootstrap")
  [[ $stem == controller-* ]] && tool=("$KAFKA_HOME/bin/kafka-metadata-quorum.sh" --bootstrap-controller "$bootstrap")
  timeout 60 "${tool[@]}" --command-config "$props" "$@" > "$out/o" 2>&1
  local rc=$? got
  if (( rc == 0 )); then got=ok
  elif grep -qE "AuthorizationException|Authorization failed|not authorized" "$out/o"; then got=denied
  else got=refused; fi
  if [[ $got == "$expect" ]]; then
    printf '  ok    %-58s %s\n' "$label" "$got"
  else
    failed=1; printf '  FAIL  %-58s expected %s, got %s (exit %s):\n' "$label" "$expect" "$got" "$rc"
    grep -vE "^\s+at |^$" "$out/o" | tail -n 6 | sed 's/^/          /'
  fi
}

roundtrip() { # $1 = listener label, $2 = bootstrap, $3 = properties stem
  local topic="check-$3-$$"
  run "$1: create topic (RF 3)" ok "$2" "$3" --create --topic "$topic" --partitions 3 --replication-factor 3
  run "$1: describe it" ok "$2" "$3" --describe --topic "$topic"
  run "$1: delete it" ok "$2" "$3" --delete --topic "$topic"
}

echo "Listeners of $RUN_DIR (Kafka's own kafka-topics.sh):"
roundtrip "SSL + client certificate (mTLS)" "$BOOTSTRAP_MTLS" mtls-console
roundtrip "SASL_SSL SCRAM-SHA-512" "$BOOTSTRAP_SCRAM" scram-console
roundtrip "SASL_PLAINTEXT OAUTHBEARER (client credentials)" "$BOOTSTRAP_OAUTH" oauth-console
roundtrip "SASL_PLAINTEXT GSSAPI" "$BOOTSTRAP_KERBEROS" kerberos-console
echo "ACLs enforced (principals without ACLs):"
run "mTLS as User:nobody: create topic" denied "$BOOTSTRAP_MTLS" mtls-nobody --create --topic "check-denied-$$"
run "SCRAM as User:nobody: create topic" denied "$BOOTSTRAP_SCRAM" scram-nobody --create --topic "check-denied-$$"
run "OAUTHBEARER as User:kafka-nobody: create topic" denied "$BOOTSTRAP_OAUTH" oauth-nobody --create --topic "check-denied-$$"
run "GSSAPI as User:nobody: create topic" denied "$BOOTSTRAP_KERBEROS" kerberos-nobody --create --topic "check-denied-$$"
echo "Refused client certificates (mTLS listener):"
run "expired client certificate" refused "$BOOTSTRAP_MTLS" mtls-expired --list
run "client certificate from another CA" refused "$BOOTSTRAP_MTLS" mtls-other --list
run "no client certificate" refused "$BOOTSTRAP_MTLS" mtls-no-certificate --list
echo "Controller (KIP-919, SSL + client certificate):"
run "kafka-metadata-quorum --bootstrap-controller: describe --status" ok "$BOOTSTRAP_CONTROLLERS" controller-console describe --status
run "the same as User:nobody" denied "$BOOTSTRAP_CONTROLLERS" controller-nobody describe --status
exit $failed
