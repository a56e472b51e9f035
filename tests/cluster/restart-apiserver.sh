#!/usr/bin/env bash
# Restarts the local cluster's kube-apiserver in place (same command line, same port), as an
# API-server upgrade or crash would: stops it, waits until its port is free, starts it again
# and waits until it serves. For e2e tests of clients that must survive that.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/lib.sh"

dir="$KWOK_WORKDIR/clusters/$CLUSTER_NAME"
pidfile="$dir/pids/kube-apiserver.pid"
pid=$(cat "$pidfile")
mapfile -d '' cmd <"/proc/$pid/cmdline"
port=$(printf '%s\n' "${cmd[@]}" | sed -n 's/^--secure-port=//p')
kill -9 "$pid"  # a crash; kube-apiserver can take minutes to drain watches on SIGTERM
# A process that exited may linger as a zombie (its parent, kwokctl, is gone): only a live one counts.
alive() { [[ -r /proc/$1/stat ]] && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }
wait_for "kube-apiserver (pid $pid) to exit" 30 bash -c "$(declare -f alive); ! alive $pid"
wait_for "port $port to be free" 30 bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null"
if [[ ${1:-} == --compact ]]; then
  etcd=$(printf '%s\n' "${cmd[@]}" | sed -n 's/^--etcd-servers=//p')
  key=$(printf '/disttrain-test/compaction' | base64 -w0)
  rev=$(curl -sf -X POST "$etcd/v3/kv/put" -d "{\"key\":\"$key\",\"value\":\"eA==\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
  curl -sf -X POST "$etcd/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null
  log "compacted etcd at revision $rev"
fi
cd "$dir"
nohup "${cmd[@]}" >>"$dir/logs/kube-apiserver.log" 2>&1 </dev/null &
echo $! >"$pidfile"
wait_for "the restarted API server to be ready" 60 kubectl_q get --raw /readyz
log "kube-apiserver restarted (pid $(cat "$pidfile"))"
