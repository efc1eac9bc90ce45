#!/usr/bin/env bash
# Builds Knative's webhook commands (knative.dev/serving/cmd/webhook and
# knative.dev/eventing/cmd/webhook) from the module versions of toolchain/webhooks.env, and
# copies kwok's default Stages (the pins' KWOK_VERSION) beside them: the lab runs the
# webhooks as local processes for each spoke and plays webhook pods with its own Stage
# (lab/kwok_stages.py). Kept out of toolchain/build.sh so that adding a Knative version
# does not rebuild the Kubernetes and Pulumi toolchain; each binary is cached by its
# module version and reused.
#
#   toolchain/webhooks.sh          build (or reuse) the default minor's webhooks; print the dir
#   toolchain/webhooks.sh --tests  the same, and the minors only the tests install
#   toolchain/webhooks.sh --print  print the dir, build nothing
#
# Layout of the dir: <component>-<minor>/webhook, kwok-stages/*.yaml.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=pins.env
source "$HERE/pins.env"
# shellcheck source=webhooks.env
source "$HERE/webhooks.env"

CACHE_ROOT="${KNATIVE_FLEET_CACHE:-$HOME/.cache/knative-fleet}"
OUT="$CACHE_ROOT/knative-webhooks/$(go env GOVERSION)"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod GOSUMDB=off GOPROXY="${GOPROXY:-https://proxy.golang.org}"
export GOGC=400

log() { echo "webhooks: $*" >&2; }

# build COMPONENT MINOR VERSION: one webhook command from a scratch module that requires
# the Knative module (`go install pkg@version` asks the proxy for the module's version
# list, which it refuses for knative.dev/eventing).
build() {
  local component="$1" minor="$2" version="$3" dest work start=$SECONDS
  dest="$OUT/$component-$minor"
  if [ -x "$dest/webhook" ] && [ "$(cat "$dest/version" 2>/dev/null)" = "$version" ]; then return 0; fi
  work="$(mktemp -d "${TMPDIR:-/tmp}/knative-webhook.XXXXXX")"
  printf 'module knative-fleet/lab-webhook\n\ngo 1.26.0\n\nrequire knative.dev/%s %s\n' \
    "$component" "$version" > "$work/go.mod"
  log "building knative.dev/$component/cmd/webhook $version ($component $minor)"
  mkdir -p "$dest"
  (cd "$work" && go build -trimpath -gcflags "all=-dwarf=false" -ldflags "-s -w" \
    -o "$dest/webhook.tmp" "knative.dev/$component/cmd/webhook")
  mv "$dest/webhook.tmp" "$dest/webhook"
  echo "$version" > "$dest/version"
  rm -rf "$work"
  log "built $component $minor webhook in $((SECONDS - start))s"
}

# kwok's default Stages of the pinned kwok, which a kwokctl config that names any Stage
# replaces: the lab's config names them all, with its own webhook-pod Stage.
stages() {
  local dir scratch
  [ -f "$OUT/kwok-stages/$KWOK_VERSION" ] && return 0
  scratch="$(mktemp -d)"
  dir="$(cd "$scratch" && go mod init scratch >/dev/null 2>&1 \
    && go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  rm -rf "$scratch"
  [ -n "$dir" ] || { log "go mod download gave no Dir for sigs.k8s.io/kwok@$KWOK_VERSION"; return 1; }
  rm -rf "$OUT/kwok-stages.tmp" && mkdir -p "$OUT/kwok-stages.tmp"
  cp "$dir/kustomize/stage/node/fast/node-initialize.yaml" \
     "$dir/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
     "$dir"/kustomize/stage/pod/fast/pod-{ready,complete,delete}.yaml "$OUT/kwok-stages.tmp/"
  chmod -R u+w "$OUT/kwok-stages.tmp"
  touch "$OUT/kwok-stages.tmp/$KWOK_VERSION"
  rm -rf "$OUT/kwok-stages" && mv "$OUT/kwok-stages.tmp" "$OUT/kwok-stages"
}

main() {
  local entry
  mkdir -p "$OUT"
  exec 9>"$OUT.lock"
  flock 9
  stages
  for entry in "$@"; do
    IFS=: read -r component minor version <<<"$entry"
    build "$component" "$minor" "$version"
  done
  echo "$OUT"
}

case "${1:-}" in
  --print) echo "$OUT" ;;
  --tests) main $KNATIVE_WEBHOOKS_DEFAULT $KNATIVE_WEBHOOKS_TESTS ;;
  "") main $KNATIVE_WEBHOOKS_DEFAULT ;;
  *) echo "usage: $0 [--tests|--print]" >&2; exit 2 ;;
esac
