#!/usr/bin/env bash
# Installs Debian's podman and runc for the container image's test
# (e2e/container_test.go loads dist/stepwise-image.tar and runs it), when
# they are missing, and writes the containers.conf it runs with: the
# cgroupfs cgroup manager (no systemd in a CI container) and runc, and no
# default ulimits (a container may not raise them above the sandbox's).
# Without podman that test skips with a message, except in CI.
set -euo pipefail
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq podman runc
fi
# Root's configuration is the system's; a user's is under $XDG_CONFIG_HOME.
if [ "$(id -u)" = 0 ]; then
  conf=/etc/containers/containers.conf
else
  conf="${XDG_CONFIG_HOME:-$HOME/.config}/containers/containers.conf"
fi
if [ -f "$conf" ] && grep -q '^# stepwise: scripts/install-podman.sh' "$conf"; then
  exit 0
fi
if [ -f "$conf" ]; then
  echo "install-podman: $conf exists, left as it is" >&2
  exit 0
fi
mkdir -p "$(dirname "$conf")"
cat > "$conf" <<'CONF'
# stepwise: scripts/install-podman.sh
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
CONF
echo "install-podman: wrote $conf" >&2
