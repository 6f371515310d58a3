#!/usr/bin/env bash
# Installs Debian's Chromium for the console's browser tests, when it is
# missing, and a Japanese font, so that the screenshots of the Japanese
# console show its text. The tests find Chromium at /usr/bin/chromium (or
# $STEPWISE_CHROMIUM) and skip with a message without it, except in CI.
set -euo pipefail
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
packages=()
if ! command -v chromium >/dev/null 2>&1 && [ ! -x "${STEPWISE_CHROMIUM:-/nonexistent}" ]; then
  packages+=(chromium)
fi
if ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then
  packages+=(fonts-noto-cjk)
fi
if [ ${#packages[@]} -eq 0 ]; then
  exit 0
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}"
