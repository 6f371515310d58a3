#!/usr/bin/env bash
# Builds the stepwise binaries of a release into dist/: one per platform
# (linux/amd64, linux/arm64, darwin/amd64, darwin/arm64, windows/amd64),
# static (CGO_ENABLED=0: the SQLite driver, modernc.org/sqlite, is pure
# Go), with the version stamped in (stepwise --version), and
# dist/SHA256SUMS. The version is $VERSION, or else `git describe`.
#
#   scripts/build-release.sh              # dist/stepwise-<version>-<os>-<arch>[.exe]
#   VERSION=v1.2.0 scripts/build-release.sh
#   PLATFORMS="linux/amd64" scripts/build-release.sh
set -euo pipefail
cd "$(dirname "$0")/.."

version="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}"
platforms="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}"

rm -rf dist
mkdir -p dist
for platform in $platforms; do
  os="${platform%/*}"
  arch="${platform#*/}"
  out="dist/stepwise-${version}-${os}-${arch}"
  if [ "$os" = windows ]; then out="${out}.exe"; fi
  echo "build-release: ${out}" >&2
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath \
    -ldflags "-s -w -X stepwise/cmd/stepwise/cli.Version=${version}" \
    -o "$out" ./cmd/stepwise
done
sum="sha256sum"
if ! command -v sha256sum >/dev/null 2>&1; then sum="shasum -a 256"; fi # macOS
(cd dist && $sum stepwise-* > SHA256SUMS)
cat dist/SHA256SUMS
