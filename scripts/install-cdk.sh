#!/usr/bin/env bash
# Installs the npm packages of the CDK test app (e2e/testdata/cdkapp:
# aws-cdk-lib, constructs, TypeScript) for the tests that synthesize it,
# once, with the machine's node and npm. The install goes to a folder of
# the user's cache named after the hash of the app's package-lock.json:
#
#   ${XDG_CACHE_HOME:-~/.cache}/stepwise/cdkapp-<sha256 of package-lock.json, 16 hex digits>
#
# (~/Library/Caches on macOS), the rule internal/testkit/cdkapp finds it
# by; a changed lock installs anew beside the old one. Without it those
# tests skip with a message, except in CI. Prints the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
app=e2e/testdata/cdkapp
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-cdk.sh: node and npm are needed (apt-get install nodejs npm)" >&2
  exit 1
fi
hash=$(sha256sum "$app/package-lock.json" | cut -c1-16)
if [ "$(uname)" = Darwin ]; then
  cache="$HOME/Library/Caches"
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}"
fi
dir="$cache/stepwise/cdkapp-$hash"
if [ -f "$dir/.installed" ]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$cache/stepwise"
tmp=$(mktemp -d "$cache/stepwise/.cdkapp-$hash.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$app/package.json" "$app/package-lock.json" "$tmp/"
(cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
touch "$tmp/.installed"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"
