#!/usr/bin/env bash
# Builds Pulumi's YAML language host (`pulumi-language-yaml`, github.com/pulumi/pulumi-yaml
# cmd/pulumi-language-yaml) from the module version below, into the tests' tools bin dir
# (`toolchain/build.sh --print`): the example of `examples/yaml/` runs the fleet package from
# a Pulumi YAML program, and the Pulumi CLI finds a language host on PATH. Kept out of
# toolchain/build.sh with a cache of its own, so that it never rebuilds the toolchain.
#
#   toolchain/yaml-host.sh          build (or reuse) it; print the dir that holds it
#   toolchain/yaml-host.sh --print  print that dir, build nothing
#
# Two builds at once take a lock: one builds, the other reuses its result. The binary is
# written as `.tmp` and renamed when complete, then its version is recorded, so a build
# that dies leaves nothing a later run takes for a finished tool.
set -euo pipefail

PULUMI_YAML_VERSION=v1.25.0

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$("$HERE/build.sh" --print)"
STAMP="$BIN/.pulumi-language-yaml-$PULUMI_YAML_VERSION-$(go env GOVERSION)"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod GOSUMDB=off GOPROXY="${GOPROXY:-https://proxy.golang.org}"
export GOGC=400

log() { echo "yaml-host: $*" >&2; }

build() {
  local work start=$SECONDS
  if [ -x "$BIN/pulumi-language-yaml" ] && [ -f "$STAMP" ]; then return 0; fi
  work="$(mktemp -d "${TMPDIR:-/tmp}/pulumi-language-yaml.XXXXXX")"
  # A scratch module that requires pulumi-yaml: its go.mod's versions, as released.
  printf 'module knative-fleet/yaml-host\n\ngo 1.26.0\n\nrequire github.com/pulumi/pulumi-yaml %s\n' \
    "$PULUMI_YAML_VERSION" > "$work/go.mod"
  log "building github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml $PULUMI_YAML_VERSION"
  (cd "$work" && go mod download github.com/pulumi/pulumi-yaml \
    && go get "github.com/pulumi/pulumi-yaml@$PULUMI_YAML_VERSION" \
    && go build -trimpath -gcflags "all=-dwarf=false" \
      -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=$PULUMI_YAML_VERSION" \
      -o "$BIN/pulumi-language-yaml.tmp" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml)
  mv "$BIN/pulumi-language-yaml.tmp" "$BIN/pulumi-language-yaml"
  rm -f "$BIN"/.pulumi-language-yaml-*
  touch "$STAMP"
  rm -rf "$work"
  log "built pulumi-language-yaml $PULUMI_YAML_VERSION in $((SECONDS - start))s"
}

case "${1:-}" in
  --print) echo "$BIN" ;;
  "")
    mkdir -p "$BIN"
    exec 9>"$BIN/.pulumi-language-yaml.lock"
    flock 9
    build
    echo "$BIN" ;;
  *) echo "usage: $0 [--print]" >&2; exit 2 ;;
esac
