#!/usr/bin/env bash
# LocalStack / MiniStack "ready" hook: deploy the Criticizer stack once the
# emulator is up. It defines nothing itself — the CDK app in infra/ is the only
# definition of the resources; this only runs the project's deploy tool
# (cmd/devstack: synth the CDK app, publish its assets, CreateStack/UpdateStack).
#
# The tool needs Go and Node.js (jsii) and the function binaries (make build).
# Emulator images usually have neither Go nor Node, in which case this hook
# prints how to deploy from the host and exits successfully.
#
# Environment: CRITICIZER_REPO (the mounted repository, default /criticizer),
# CRITICIZER_ENV (local), CRITICIZER_OVERRIDES (JSON laid over the environment),
# CRITICIZER_ASSET_ROOT (build/lambda), GATEWAY_PORT (4566).
set -euo pipefail

REPO="${CRITICIZER_REPO:-/criticizer}"
ENDPOINT="http://127.0.0.1:${GATEWAY_PORT:-4566}"

if ! command -v go >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1 || [ ! -f "$REPO/cmd/devstack/main.go" ]; then
  echo "10-deploy.sh: no Go/Node toolchain or repository in this container; deploy from the host:" >&2
  echo "  make build && go run ./cmd/devstack deploy -endpoint $ENDPOINT" >&2
  exit 0
fi

cd "$REPO"
exec go run ./cmd/devstack deploy -endpoint "$ENDPOINT" -env "${CRITICIZER_ENV:-local}" \
  ${CRITICIZER_OVERRIDES:+-overrides "$CRITICIZER_OVERRIDES"} \
  ${CRITICIZER_ASSET_ROOT:+-asset-root "$CRITICIZER_ASSET_ROOT"}
