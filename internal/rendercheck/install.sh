#!/usr/bin/env bash
# Install the renderer P4 Code Review bundles, for internal/rendercheck:
# php-cli and Debian's php-parsedown (Parsedown 1.7.4), with apt, as
# localstack/start.sh installs the emulator. Non-interactive (CI runs as root
# with CI=true and no stdin); without root it uses `sudo -n`. Exits non-zero
# with a message when they cannot be installed: the tests fail, never skip.
set -euo pipefail

PARSEDOWN=/usr/share/php/Parsedown/Parsedown.php
WANT=1.7.4

have() {
  command -v php >/dev/null 2>&1 &&
    php -r "require '$PARSEDOWN'; exit(Parsedown::version === '$WANT' ? 0 : 3);" >/dev/null 2>&1
}

have && exit 0

SUDO=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "rendercheck: php-cli and php-parsedown are missing and there is no root or sudo to install them (apt-get install php-cli php-parsedown)" >&2; exit 1; }
  SUDO=(sudo -n)
fi
command -v apt-get >/dev/null 2>&1 || { echo "rendercheck: php-cli and php-parsedown are missing and apt-get is not available: install Parsedown $WANT at $PARSEDOWN" >&2; exit 1; }

export DEBIAN_FRONTEND=noninteractive
# Serialise concurrent installs (test packages run in parallel).
exec 9>/tmp/criticizer-rendercheck-apt.lock
flock 9
have && exit 0
echo "rendercheck: installing php-cli php-parsedown with apt-get" >&2
if ! "${SUDO[@]}" apt-get install -y --no-install-recommends php-cli php-parsedown </dev/null >&2; then
  "${SUDO[@]}" apt-get update </dev/null >&2
  "${SUDO[@]}" apt-get install -y --no-install-recommends php-cli php-parsedown </dev/null >&2
fi
have || { echo "rendercheck: installed, but $PARSEDOWN is not Parsedown $WANT" >&2; exit 1; }
