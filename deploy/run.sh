#!/usr/bin/env bash
# Three notes-server replicas on one machine, behind HAProxy (round robin, no sticky sessions),
# sharing their sessions in Redis and their notes in one SQLite file. Needs redis-server and
# haproxy (Debian: apt-get install redis-server haproxy).
#
#   deploy/run.sh          # MCP at http://127.0.0.1:8080/mcp until Ctrl-C
#   deploy/run.sh redis    # Redis alone, as the whole setup starts it (to restart it)
#
# DEPLOY_PORT (8080) is HAProxy's port; the replicas listen on the next three and Redis on
# DEPLOY_PORT + 10. DEPLOY_DIR (target/deploy) holds the notes, Redis's append-only file, the
# logs and a file of each process's id. NOTES_SERVER names a notes-server binary built already;
# by default the release one is built.
set -euo pipefail
cd "$(dirname "$0")/.."

export DEPLOY_PORT="${DEPLOY_PORT:-8080}"
export DEPLOY_DIR="${DEPLOY_DIR:-$(pwd)/target/deploy}"
export REPLICA1_PORT=$((DEPLOY_PORT + 1)) REPLICA2_PORT=$((DEPLOY_PORT + 2)) REPLICA3_PORT=$((DEPLOY_PORT + 3))
redis_port=$((DEPLOY_PORT + 10))
mkdir -p "$DEPLOY_DIR"

# Redis keeps what it is told in an append-only file, so a restart loses no session.
redis() {
    exec redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$DEPLOY_DIR" \
        --appendonly yes --save "" --logfile "$DEPLOY_DIR/redis.log"
}
if [ "${1:-}" = redis ]; then
    redis
fi

if [ -z "${NOTES_SERVER:-}" ]; then
    cargo build --release -p notes-server
    NOTES_SERVER=target/release/notes-server
fi

pids=()
stop() {
    trap - EXIT INT TERM
    kill "${pids[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap stop EXIT INT TERM

wait_for() {
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "nothing listens on port $1: see $DEPLOY_DIR/*.log" >&2
    exit 1
}

(redis) &
pids+=($!)
echo $! >"$DEPLOY_DIR/redis.pid"
wait_for "$redis_port"

for n in 1 2 3; do
    port_var="REPLICA${n}_PORT"
    "$NOTES_SERVER" --http "127.0.0.1:${!port_var}" --redis "redis://127.0.0.1:$redis_port/" \
        --data "$DEPLOY_DIR/notes.db" 2>"$DEPLOY_DIR/replica$n.log" &
    pids+=($!)
    echo $! >"$DEPLOY_DIR/replica$n.pid"
done
for n in 1 2 3; do
    port_var="REPLICA${n}_PORT"
    wait_for "${!port_var}"
done

haproxy -db -f deploy/haproxy.cfg 2>"$DEPLOY_DIR/haproxy.log" &
pids+=($!)
echo $! >"$DEPLOY_DIR/haproxy.pid"
wait_for "$DEPLOY_PORT"

echo "MCP at http://127.0.0.1:$DEPLOY_PORT/mcp (replicas on $REPLICA1_PORT-$REPLICA3_PORT, Redis on $redis_port); Ctrl-C stops"
wait
