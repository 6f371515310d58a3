#!/usr/bin/env bash
# Builds Stepwise's container image without a container engine: the
# static binaries for linux/amd64 and linux/arm64 (as
# scripts/build-release.sh builds them), then internal/cmd/imagebuild puts
# each in an image (the binary, CA certificates from this machine, the
# non-root user stepwise, uid/gid 65532, and its /data volume) and writes
# dist/stepwise-image.tar (or $OUT), a docker-archive that `docker load` and
# `podman load` read: $TAG (default stepwise:dev) is this machine's
# architecture's image, $TAG-amd64 and $TAG-arm64 each platform's. It
# prints each image's size at the end. The version is $VERSION, or else
# `git describe`. docs/container.md says how to run it.
#
#   scripts/build-image.sh                      # dist/stepwise-image.tar
#   podman load -i dist/stepwise-image.tar      # or docker load -i ...
#   TAG=stepwise:v1.2.0 VERSION=v1.2.0 scripts/build-image.sh
#   scripts/build-image.sh --push registry.example.com/stepwise:v1.2.0
#
# --push REF also pushes both images to a registry as one multi-platform
# index, with the credentials of ~/.docker/config.json.
set -euo pipefail
cd "$(dirname "$0")/.."

push=()
while [ $# -gt 0 ]; do
  case "$1" in
    --push) [ $# -ge 2 ] || { echo "build-image: --push needs a REF" >&2; exit 2; }
            push=(--push "$2"); shift 2 ;;
    *) echo "build-image: unknown argument $1 (want: [--push REF])" >&2; exit 2 ;;
  esac
done

version="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}"
tag="${TAG:-stepwise:dev}"
out="${OUT:-dist/stepwise-image.tar}"
platforms="${PLATFORMS:-linux/amd64 linux/arm64}"
# The commit's time, so that building a commit twice gives the same image.
created="$(git log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)"
revision="$(git rev-parse HEAD 2>/dev/null || true)"
source_url="${SOURCE_URL:-$(git remote get-url origin 2>/dev/null || true)}"
licenses="${LICENSES:-}"
if [ -z "$licenses" ] && [ -f LICENSE ]; then
  case "$(head -c 4096 LICENSE)" in
    *"Apache License"*"Version 2.0"*) licenses="Apache-2.0" ;;
    *"MIT License"*|*"Permission is hereby granted, free of charge"*) licenses="MIT" ;;
    *"Mozilla Public License"*"2.0"*) licenses="MPL-2.0" ;;
    *"GNU AFFERO GENERAL PUBLIC LICENSE"*) licenses="AGPL-3.0-only" ;;
    *"BSD 3-Clause"*|*"Neither the name of"*) licenses="BSD-3-Clause" ;;
  esac
fi

mkdir -p dist
bindir="$(mktemp -d dist/.image-bin.XXXXXX)"
trap 'rm -rf "$bindir"' EXIT
binaries=()
for platform in $platforms; do
  os="${platform%/*}"
  arch="${platform#*/}"
  bin="$bindir/stepwise-${os}-${arch}"
  echo "build-image: ${bin#"$bindir"/} (${version})" >&2
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath \
    -ldflags "-s -w -X stepwise/cmd/stepwise/cli.Version=${version}" \
    -o "$bin" ./cmd/stepwise
  binaries+=(--binary "${platform}=${bin}")
done

labels=(--label "org.opencontainers.image.revision=${revision}"
        --label "org.opencontainers.image.source=${source_url}"
        --label "org.opencontainers.image.licenses=${licenses}")
go run ./internal/cmd/imagebuild "${binaries[@]}" --out "$out" \
  --tag "$tag" --version "$version" --created "$created" \
  --ca-certs "${CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "${labels[@]}" ${push[@]+"${push[@]}"}
