#!/usr/bin/env bash
# Calls per second through the HTTP transport, with wrk (Debian: apt-get install wrk): one
# notes-server with its sessions in memory, one with them in Redis, and three behind HAProxy
# sharing Redis (deploy/run.sh). Every call is `get_note` in one session opened beforehand, from
# 16 connections for 10 seconds; the notes are in one SQLite file.
#
#   deploy/bench.sh        # prints a Markdown table
set -euo pipefail
cd "$(dirname "$0")/.."

export DEPLOY_PORT="${DEPLOY_PORT:-8180}"
export DEPLOY_DIR="${DEPLOY_DIR:-$(pwd)/target/deploy-bench}"
connections="${CONNECTIONS:-16}"
duration="${DURATION:-10s}"
rm -rf "$DEPLOY_DIR"
mkdir -p "$DEPLOY_DIR"
if [ -z "${NOTES_SERVER:-}" ]; then
    cargo build --quiet --release -p notes-server
    NOTES_SERVER="$(pwd)/target/release/notes-server"
fi
export NOTES_SERVER

pids=()
stop() {
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    pids=()
}
trap stop EXIT

wait_for() {
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    exit 1
}

post() {
    curl -sS -D "$DEPLOY_DIR/headers" -H 'content-type: application/json' \
        -H 'accept: application/json, text/event-stream' "$@"
}

# A session on the endpoint at $1, with one note in it; prints the session's id.
session() {
    post "$1" -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' >/dev/null
    local id
    id=$(grep -i '^mcp-session-id:' "$DEPLOY_DIR/headers" | tr -d '\r' | cut -d' ' -f2)
    post "$1" -H "mcp-session-id: $id" -H 'mcp-protocol-version: 2025-11-25' \
        -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_note","arguments":{"title":"bench","body":"a note to get"}}}' >/dev/null
    echo "$id"
}

# wrk against $1; prints "calls/s | p50 | p99 | errors".
load() {
    local out
    out=$(SESSION="$2" wrk -t2 -c"$connections" -d"$duration" --latency -s deploy/call.lua "$1")
    echo "$out" >>"$DEPLOY_DIR/wrk.log"
    local rate p50 p99 errors
    rate=$(echo "$out" | awk '/^Requests\/sec/ {printf "%.0f", $2}')
    p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
    p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
    errors=$(echo "$out" | awk '/Non-2xx/ {print $5}')
    echo "$rate | $p50 | $p99 | ${errors:-0}"
}

redis_port=$((DEPLOY_PORT + 10))
one=$((DEPLOY_PORT + 1))

echo "| setup | calls/s | p50 | p99 | non-2xx |"
echo "| --- | ---: | ---: | ---: | ---: |"

"$NOTES_SERVER" --http "127.0.0.1:$one" --data "$DEPLOY_DIR/notes.db" 2>"$DEPLOY_DIR/memory.log" &
pids+=($!)
wait_for "$one"
echo "| one replica, sessions in memory | $(load "http://127.0.0.1:$one/mcp" "$(session "http://127.0.0.1:$one/mcp")") |"
stop

redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$DEPLOY_DIR" --save "" \
    --appendonly yes --logfile "$DEPLOY_DIR/redis.log" &
pids+=($!)
wait_for "$redis_port"
"$NOTES_SERVER" --http "127.0.0.1:$one" --redis "redis://127.0.0.1:$redis_port/" \
    --data "$DEPLOY_DIR/notes.db" 2>"$DEPLOY_DIR/redis-one.log" &
pids+=($!)
wait_for "$one"
echo "| one replica, sessions in Redis | $(load "http://127.0.0.1:$one/mcp" "$(session "http://127.0.0.1:$one/mcp")") |"
stop

deploy/run.sh >/dev/null &
pids+=($!)
wait_for "$DEPLOY_PORT"
sleep 1
echo "| three replicas, Redis, HAProxy round robin | $(load "http://127.0.0.1:$DEPLOY_PORT/mcp" "$(session "http://127.0.0.1:$DEPLOY_PORT/mcp")") |"
stop
