# shellcheck shell=bash
# Shared by start.sh and stop.sh: the layout (paths, ports, names) and "is this process ours".
# Every value here can be overridden from the environment; the defaults keep clear of
# ../shared/kafka-local (39xxx) by using 41xxx.

KAFKA_HOME=${KAFKA_HOME:-/opt/realkafka/kafka_2.13-4.1.0}
RUN_DIR=${RUN_DIR:-/opt/realkafka/secured}
[[ $RUN_DIR == /?*/?* && $RUN_DIR != *..* ]] || {
  echo "RUN_DIR must be an absolute path two or more levels deep" >&2; exit 2; }
PID_DIR=$RUN_DIR/pids
HOST=127.0.0.1
REALM=${REALM:-KAFKA.SECURED}

OIDC_PORT=${OIDC_PORT:-41080}          # the OIDC provider (tests/sso/provider)
KDC_PORT=${KDC_PORT:-41088}            # krb5kdc, TCP and UDP
CONTROLLER_PORT=${CONTROLLER_PORT:-41090}   # controller 101, SSL + client certificate
INTERNAL_PORT_BASE=${INTERNAL_PORT_BASE:-41000}  # brokers 1..3: 41001..41003
MTLS_PORT_BASE=${MTLS_PORT_BASE:-41100}
SCRAM_PORT_BASE=${SCRAM_PORT_BASE:-41200}
OAUTH_PORT_BASE=${OAUTH_PORT_BASE:-41300}
KERBEROS_PORT_BASE=${KERBEROS_PORT_BASE:-41400}
BROKER_IDS=(1 2 3)
CONTROLLER_ID=101

PKI=$RUN_DIR/pki        # CA, broker and client certificates (made by openssl at first start)
KRB=$RUN_DIR/krb5       # the realm's database, kdc.conf, krb5.conf, keytabs
OIDC=$RUN_DIR/oidc      # the provider's sqlite database, RSA key and log
CLIENT=$RUN_DIR/client  # --command-config properties for Kafka's tools, one per listener and user

ISSUER=http://$HOST:$OIDC_PORT/o
TOKEN_ENDPOINT=$ISSUER/token/
JWKS_URL=$ISSUER/.well-known/jwks.json
AUDIENCE=kafka

# Every JVM (brokers, controller, tools): Kerberos config, and the URLs Kafka 4 lets the OAUTHBEARER
# code fetch (the broker's JWKS, a client's token endpoint); the JMX agent stays on loopback.
JVM_OPTS="-Djava.security.krb5.conf=$KRB/krb5.conf -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=$JWKS_URL,$TOKEN_ENDPOINT"
export KAFKA_JMX_OPTS="-Djava.rmi.server.hostname=127.0.0.1"

NODES=(oidc kdc "controller-$CONTROLLER_ID")
for b in "${BROKER_IDS[@]}"; do NODES+=("broker-$b"); done

marker() { # $1 = node name -> a string only that node's process has in its command line or environment
  case $1 in
    oidc) echo "IDP_DB=$OIDC/idp.sqlite3" ;;
    kdc) echo "KRB5_KDC_PROFILE=$KRB/kdc.conf" ;;
    *) echo "$RUN_DIR/$1/server.properties" ;;
  esac
}

ours() { # $1 = node name -> prints the pid if the saved pid is alive and still runs that node
  local pid m; pid=$(cat "$PID_DIR/$1.pid" 2>/dev/null) || return 1
  [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
  m=$(marker "$1")
  # (no pipe: grep -q closing early would fail the pipeline under pipefail)
  grep -qF -- "$m" < <(tr '\0' '\n' 2>/dev/null < "/proc/$pid/cmdline"; tr '\0' '\n' 2>/dev/null < "/proc/$pid/environ") ||
    return 1
  echo "$pid"
}
