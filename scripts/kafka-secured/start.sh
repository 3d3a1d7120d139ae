#!/usr/bin/env bash
# Start a secured Apache Kafka 4.1 cluster (KRaft) on 127.0.0.1 from the distribution in $KAFKA_HOME,
# with the identity services it needs: a Kerberos KDC (Debian krb5-kdc) and an OIDC provider
# (tests/sso/provider). See README.md beside this file for the listeners, users and files.
#
#   start.sh            start (makes certificates, realm, provider db and storage on first use)
#   start.sh --fresh    wipe $RUN_DIR and start a brand-new cluster, realm, PKI and provider
#
# Running it again while everything runs prints the endpoints and changes nothing.
# Env: KAFKA_HOME (/opt/realkafka/kafka_2.13-4.1.0), RUN_DIR (/opt/realkafka/secured), PYTHON (the repo's
# .venv python, for the provider), BROKER_HEAP, CONTROLLER_HEAP, START_TIMEOUT (s), ports in lib.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"
# shellcheck source=pki.sh
source "$HERE/pki.sh"
# shellcheck source=realm.sh
source "$HERE/realm.sh"
# shellcheck source=config.sh
source "$HERE/config.sh"
PYTHON=${PYTHON:-$REPO/.venv/bin/python}
BROKER_HEAP=${BROKER_HEAP:--Xmx384m -Xms128m}
CONTROLLER_HEAP=${CONTROLLER_HEAP:--Xmx256m -Xms64m}
START_TIMEOUT=${START_TIMEOUT:-240}

FRESH=0
case "${1:-}" in --fresh) FRESH=1 ;; "") ;; *) echo "usage: $0 [--fresh]" >&2; exit 2 ;; esac

[[ -x "$KAFKA_HOME/bin/kafka-server-start.sh" && -s "$KAFKA_HOME/libs/kafka-clients-4.1.0.jar" ]] || {
  echo "No Kafka 4.1 distribution at $KAFKA_HOME - fetch it as ../shared/kafka-local/README.md says." >&2; exit 1; }
for tool in java openssl; do command -v $tool >/dev/null || { echo "$tool not found on PATH" >&2; exit 1; }; done
[[ -x $PYTHON ]] && "$PYTHON" -c "import oauth2_provider, jwcrypto" 2>/dev/null || {
  echo "$PYTHON cannot import django-oauth-toolkit: run 'make' in $REPO (or set PYTHON)." >&2; exit 1; }
need_krb5_packages

# ---------------------------------------------------------------- already running?
running=(); for n in "${NODES[@]}"; do ours "$n" >/dev/null && running+=("$n"); done
if (( ${#running[@]} == ${#NODES[@]} )) && (( ! FRESH )); then
  echo "Already running (${running[*]})."; cat "$RUN_DIR/endpoints.txt" 2>/dev/null || true; exit 0
fi
if (( ${#running[@]} )); then
  echo "Partly running (${running[*]}): run $HERE/stop.sh first." >&2; exit 1
fi
rm -f "$PID_DIR"/*.pid 2>/dev/null || true

port_busy() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }
ports=("$OIDC_PORT" "$KDC_PORT" "$CONTROLLER_PORT")
for b in "${BROKER_IDS[@]}"; do
  ports+=($((INTERNAL_PORT_BASE + b)) $((MTLS_PORT_BASE + b)) $((SCRAM_PORT_BASE + b)) \
    $((OAUTH_PORT_BASE + b)) $((KERBEROS_PORT_BASE + b)))
done
for p in "${ports[@]}"; do
  if port_busy "$p"; then echo "Port $p on $HOST is already in use - not starting." >&2; exit 1; fi
done

# ---------------------------------------------------------------- one-time material
(( FRESH )) && rm -rf "$RUN_DIR"
mkdir -p "$RUN_DIR" "$PID_DIR"; chmod 755 "$RUN_DIR"
if [[ ! -s $PKI/console.p12 ]]; then echo "Making the test PKI in $PKI ..."; make_pki; fi
if [[ ! -s $KRB/nobody.keytab ]]; then echo "Creating Kerberos realm $REALM in $KRB ..."; make_realm; fi
write_krb5_conf   # ports may have changed; the database stays

provider_env() {
  export DJANGO_SETTINGS_MODULE=provider.settings PYTHONPATH=$REPO/tests/sso IDP_DB=$OIDC/idp.sqlite3 \
    IDP_TOKEN_AUDIENCE=$AUDIENCE IDP_RSA_KEY
  IDP_RSA_KEY=$(cat "$OIDC/rsa.key")
}
if [[ ! -s $OIDC/idp.sqlite3 ]]; then
  echo "Setting up the OIDC provider in $OIDC ..."
  rm -rf "$OIDC"; mkdir -p "$OIDC"; chmod 700 "$OIDC"
  ( umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$OIDC/rsa.key" 2>/dev/null )
  ( provider_env; cd "$REPO/tests/sso"
    "$PYTHON" -m django migrate --verbosity 0
    "$PYTHON" -m django idp service "$OAUTH_CLIENT_ID" "$OAUTH_CLIENT_SECRET"
    "$PYTHON" -m django idp service "$OAUTH_NOBODY_ID" "$OAUTH_NOBODY_SECRET" )
fi

write_node_configs
if [[ ! -f $RUN_DIR/cluster.id ]]; then
  echo "Formatting storage (SCRAM-SHA-512 users $SCRAM_USER and $SCRAM_NOBODY) ..."
  export KAFKA_HEAP_OPTS=-Xmx128m
  cid=$("$KAFKA_HOME/bin/kafka-storage.sh" random-uuid)
  scram=(--add-scram "SCRAM-SHA-512=[name=$SCRAM_USER,password=$SCRAM_PASSWORD]"
         --add-scram "SCRAM-SHA-512=[name=$SCRAM_NOBODY,password=$SCRAM_NOBODY_PASSWORD]")
  "$KAFKA_HOME/bin/kafka-storage.sh" format --cluster-id "$cid" --standalone \
    --config "$RUN_DIR/controller-$CONTROLLER_ID/server.properties" "${scram[@]}"
  for b in "${BROKER_IDS[@]}"; do
    "$KAFKA_HOME/bin/kafka-storage.sh" format --cluster-id "$cid" --config "$RUN_DIR/broker-$b/server.properties"
  done
  unset KAFKA_HEAP_OPTS
  echo "$cid" > "$RUN_DIR/cluster.id"
fi
CLUSTER_ID=$(cat "$RUN_DIR/cluster.id")

# ---------------------------------------------------------------- start
fail() {
  echo "ERROR: $*" >&2
  local n
  for n in "${NODES[@]}"; do
    if [[ -f $PID_DIR/$n.pid ]] && ! ours "$n" >/dev/null; then
      echo "--- $n is not running; last lines of its log:" >&2
      tail -n 25 "$(node_log "$n")" 2>/dev/null >&2 || true
    fi
  done
  echo "Stopping what was started..." >&2
  "$HERE/stop.sh" >&2 || true
  exit 1
}
node_log() { case $1 in oidc) echo "$OIDC/idp.log" ;; kdc) echo "$KRB/kdc.stdout.log" ;; *) echo "$RUN_DIR/$1/logs/stdout.log" ;; esac; }

launch() { # $1 = node name, rest = command; runs in its own session, its pid saved
  local name=$1; shift
  ( exec setsid "$@" > "$(node_log "$name")" 2>&1 < /dev/null ) &
  echo $! > "$PID_DIR/$name.pid"
  sleep 0.5
  ours "$name" >/dev/null || fail "$name did not start"
  echo "  started $name (pid $(cat "$PID_DIR/$name.pid"))"
}
deadline=$(( $(date +%s) + START_TIMEOUT ))
wait_until() { # $1 = node, $2 = what, rest = test command
  local name=$1 what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    ours "$name" >/dev/null || fail "$name exited during startup"
    (( $(date +%s) < deadline )) || fail "$name: no $what within ${START_TIMEOUT}s"
    sleep 1
  done
}
in_log() { grep -qF -- "$2" "$(node_log "$1")"; }

echo "Starting the KDC, the OIDC provider and Kafka $(basename "$KAFKA_HOME") cluster $CLUSTER_ID ..."
KRB5_CONFIG=$KRB/krb5.conf KRB5_KDC_PROFILE=$KRB/kdc.conf launch kdc krb5kdc -n -r "$REALM"
( provider_env; cd "$REPO/tests/sso"
  launch oidc "$PYTHON" -m django runserver "$HOST:$OIDC_PORT" --noreload --skip-checks )
wait_until oidc "JWKS answer" curl -sf --max-time 2 "$JWKS_URL"
wait_until kdc "ticket for console@$REALM" env KRB5_CONFIG="$KRB/krb5.conf" KRB5CCNAME="MEMORY:" \
  kinit -k -t "$KRB/console.keytab" "console@$REALM"

start_kafka() { # $1 = node, $2 = heap
  local dir=$RUN_DIR/$1
  ( cd "$dir"; export LOG_DIR=$dir/logs KAFKA_HEAP_OPTS="$2" KAFKA_OPTS="$JVM_OPTS"; unset JMX_PORT
    launch "$1" "$KAFKA_HOME/bin/kafka-server-start.sh" "$dir/server.properties" )
}
start_kafka "controller-$CONTROLLER_ID" "$CONTROLLER_HEAP"
wait_until "controller-$CONTROLLER_ID" "start" in_log "controller-$CONTROLLER_ID" "Kafka Server started"
for b in "${BROKER_IDS[@]}"; do start_kafka "broker-$b" "$BROKER_HEAP"; done
for b in "${BROKER_IDS[@]}"; do
  wait_until "broker-$b" "unfencing" in_log "broker-$b" "Transition from STARTING to STARTED"
done
echo "  brokers up (unfenced)"

write_client_files
cat "$RUN_DIR/endpoints.txt"
