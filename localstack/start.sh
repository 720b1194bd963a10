#!/usr/bin/env bash
# Start the local AWS emulator (MiniStack, LocalStack-compatible) without Docker.
#
#   localstack/start.sh                 install if needed, start on 127.0.0.1:${PORT:-4566}, wait for health
#   localstack/start.sh --install-only  only make sure .venv/ holds the pinned MiniStack
#   localstack/start.sh --install-validators  only make sure .venv/validators/ holds the pinned
#                                       cfn-lint and checkov (make validate)
#
# MiniStack is installed from PyPI at MINISTACK_VERSION (versions.env) into the
# project venv .venv/. This is the single install path: internal/devstack calls
# `--install-only` and then starts .venv/bin/ministack itself.
#
# Environment: PORT or GATEWAY_PORT (default 4566), MINISTACK_REGION (us-east-1),
# PYTHON (python3), LOG_LEVEL (INFO). Writes .run/ministack-<port>.pid and .log.
# Stop with localstack/stop.sh (same PORT).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=/dev/null
. "$ROOT/versions.env"
: "${MINISTACK_VERSION:?versions.env must set MINISTACK_VERSION}"
: "${CBOR2_VERSION:?versions.env must set CBOR2_VERSION}"

VENV="$ROOT/.venv"
RUN="$ROOT/.run"
PORT="${PORT:-${GATEWAY_PORT:-4566}}"
REGION="${MINISTACK_REGION:-us-east-1}"
# shellcheck source=install.sh
. "$ROOT/localstack/install.sh"

install() {
  install_venv "$VENV" "$VENV/.pinned-ministack-$MINISTACK_VERSION-cbor2-$CBOR2_VERSION" \
    "ministack==$MINISTACK_VERSION" "cbor2==$CBOR2_VERSION"
}

# The template validators (cfn-lint, checkov) at their pinned versions, in a
# venv of their own (.venv/validators): their dependencies must not move
# MiniStack's.
install_validators() {
  : "${CFN_LINT_VERSION:?versions.env must set CFN_LINT_VERSION}" "${CHECKOV_VERSION:?versions.env must set CHECKOV_VERSION}"
  install_venv "$VENV/validators" "$VENV/validators/.pinned-cfn-lint-$CFN_LINT_VERSION-checkov-$CHECKOV_VERSION" \
    "cfn-lint==$CFN_LINT_VERSION" "checkov==$CHECKOV_VERSION"
}

if [ "${1:-}" = "--install-validators" ]; then
  install_validators
  exit 0
fi
install
if [ "${1:-}" = "--install-only" ]; then
  exit 0
fi

PIDFILE="$RUN/ministack-$PORT.pid"
LOG="$RUN/ministack-$PORT.log"
URL="http://127.0.0.1:$PORT"

if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
  echo "start.sh: MiniStack already running (pid $(cat "$PIDFILE")) on $URL" >&2
  exit 0
fi

# Lambda functions run as child processes of the emulator and inherit its
# environment: point their SDKs back at the emulator, and drop any real AWS
# credentials/profile from the caller's shell.
mkdir -p "$RUN/tmp-$PORT"
env -u AWS_PROFILE -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN \
  GATEWAY_PORT="$PORT" BIND_HOST=127.0.0.1 MINISTACK_REGION="$REGION" \
  AWS_ENDPOINT_URL="$URL" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
  TMPDIR="$RUN/tmp-$PORT" LOG_LEVEL="${LOG_LEVEL:-INFO}" \
  setsid "$VENV/bin/ministack" >"$LOG" 2>&1 </dev/null &
echo $! >"$PIDFILE"

for _ in $(seq 1 120); do
  if curl -fsS "$URL/_ministack/health" >/dev/null 2>&1; then
    echo "start.sh: MiniStack $MINISTACK_VERSION ready on $URL (pid $(cat "$PIDFILE"), log $LOG)" >&2
    exit 0
  fi
  if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    echo "start.sh: MiniStack exited during startup; last log lines:" >&2
    tail -n 30 "$LOG" >&2
    rm -f "$PIDFILE"
    exit 1
  fi
  sleep 0.5
done
echo "start.sh: MiniStack did not become healthy on $URL within 60s (log $LOG)" >&2
exit 1
