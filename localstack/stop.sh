#!/usr/bin/env bash
# Stop the MiniStack started by localstack/start.sh on PORT
# (default 4566): SIGTERM to its process group (the emulator and the Lambda
# processes it spawned), then SIGKILL after 10 s.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${PORT:-${GATEWAY_PORT:-4566}}"
PIDFILE="$ROOT/.run/ministack-$PORT.pid"

if [ ! -f "$PIDFILE" ]; then
  echo "stop.sh: no MiniStack pid file for port $PORT ($PIDFILE)" >&2
  exit 0
fi
PID="$(cat "$PIDFILE")"
if ! kill -0 "$PID" 2>/dev/null; then
  echo "stop.sh: MiniStack (pid $PID) was not running" >&2
  rm -f "$PIDFILE"
  exit 0
fi
# setsid made the emulator its own process-group leader: pgid == pid.
kill -TERM -- "-$PID" 2>/dev/null || kill -TERM "$PID"
for _ in $(seq 1 100); do
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$PID" 2>/dev/null; then
  echo "stop.sh: MiniStack (pid $PID) ignored SIGTERM; killing" >&2
  kill -KILL -- "-$PID" 2>/dev/null || kill -KILL "$PID"
fi
rm -f "$PIDFILE"
rm -rf "$ROOT/.run/tmp-$PORT"   # extracted Lambda code
echo "stop.sh: MiniStack on port $PORT stopped" >&2
