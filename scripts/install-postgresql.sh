#!/usr/bin/env bash
# Installs Debian's PostgreSQL server for the tests of the PostgreSQL store
# (internal/testkit/pgtest starts a throwaway cluster from its binaries), when it
# is missing. Without it those tests skip with a message, except in CI.
set -euo pipefail
if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql
