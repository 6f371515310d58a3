#!/usr/bin/env bash
# Installs Debian's Chromium for the console's browser tests, when it is
# missing. The tests find it at /usr/bin/chromium (or $STEPWISE_CHROMIUM)
# and skip with a message without it, except in CI.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x "${STEPWISE_CHROMIUM:-/nonexistent}" ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium
