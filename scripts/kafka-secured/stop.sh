#!/usr/bin/env bash
# Stop what start.sh started - only the pids saved in $RUN_DIR/pids, and only while each still runs
# its own node: brokers first (controlled shutdown needs the controller), then the controller, then
# the OIDC provider and the KDC. SIGTERM, then SIGKILL after STOP_TIMEOUT seconds.
#   stop.sh           stop; keep data, PKI, realm and provider db (start.sh reuses them)
#   stop.sh --wipe    stop and delete $RUN_DIR
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"
STOP_TIMEOUT=${STOP_TIMEOUT:-60}
WIPE=0
case "${1:-}" in --wipe) WIPE=1 ;; "") ;; *) echo "usage: $0 [--wipe]" >&2; exit 2 ;; esac

stop_group() { # node names
  local names=() n p
  for n in "$@"; do
    [[ -e $PID_DIR/$n.pid ]] || continue
    if p=$(ours "$n"); then
      names+=("$n"); kill -TERM "$p" 2>/dev/null && echo "  SIGTERM $n (pid $p)"
    else
      echo "  $n: not running"; rm -f "$PID_DIR/$n.pid"
    fi
  done
  (( ${#names[@]} )) || return 0
  local deadline=$(( $(date +%s) + STOP_TIMEOUT )) left
  while :; do
    left=0; for n in "${names[@]}"; do ours "$n" >/dev/null && left=1; done
    (( left )) || break
    if (( $(date +%s) >= deadline )); then
      for n in "${names[@]}"; do
        if p=$(ours "$n"); then echo "  SIGKILL $n (pid $p)"; kill -KILL "$p" 2>/dev/null; fi
      done
      sleep 1; break
    fi
    sleep 1
  done
  for n in "${names[@]}"; do rm -f "$PID_DIR/$n.pid"; echo "  stopped $n"; done
}

if [[ -d $PID_DIR ]]; then
  brokers=(); for b in "${BROKER_IDS[@]}"; do brokers+=("broker-$b"); done
  echo "Stopping brokers..."; stop_group "${brokers[@]}"
  echo "Stopping the controller..."; stop_group "controller-$CONTROLLER_ID"
  echo "Stopping the OIDC provider and the KDC..."; stop_group oidc kdc
else
  echo "No $PID_DIR - nothing started by start.sh."
fi
if (( WIPE )); then rm -rf "$RUN_DIR" && echo "Removed $RUN_DIR"; fi
