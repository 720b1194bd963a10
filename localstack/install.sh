# Sourced by start.sh and llama.sh: the one way this repository installs a pinned
# Python venv. Needs ROOT (the repository root) and honours PYTHON (python3).
#
#   install_venv VENV STAMP PIP_ARG...
#
# Serialized with flock on .run/install-<venv path>.lock (parallel test packages
# each call their script), skipped entirely once STAMP exists, otherwise a venv
# from $PYTHON (>= 3.10) and one `pip install PIP_ARG...`. A caller that must do
# more inside the lock first (llama.sh builds its wheel) names a shell function
# in INSTALL_PREPARE; it gets the venv's python as its argument.
install_venv() {
  local venv="$1" stamp="$2" python="${PYTHON:-python3}"
  shift 2
  mkdir -p "$ROOT/.run" "$ROOT/.venv"
  [ -f "$ROOT/.run/.gitignore" ] || printf '*\n' >"$ROOT/.run/.gitignore"
  [ -f "$ROOT/.venv/.gitignore" ] || printf '*\n' >"$ROOT/.venv/.gitignore"
  local name="${venv#"$ROOT/"}"
  exec 9>"$ROOT/.run/install-${name//\//-}.lock"
  flock 9
  if [ -x "$venv/bin/python" ] && [ -f "$stamp" ]; then
    exec 9>&-
    return 0
  fi
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
      { echo "install.sh: $python must be Python >= 3.10" >&2; exit 1; }
    "$python" -m venv "$venv"
  fi
  if [ -n "${INSTALL_PREPARE:-}" ]; then
    "$INSTALL_PREPARE" "$venv/bin/python"
  fi
  echo "install.sh: installing $* into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
  # One stamp per venv: the pins it names are the ones installed.
  rm -f "$venv"/.pinned-*
  touch "$stamp"
  exec 9>&-
}
