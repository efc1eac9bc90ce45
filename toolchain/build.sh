#!/usr/bin/env bash
# Builds the lab toolchain (Kubernetes control plane, etcd, kwok, the
# cluster-inventory credential plugin, the Pulumi CLI, its Python language
# host and the Kubernetes provider exactly as released) from pinned Go modules into a cache
# outside the repo, keyed by the pins, and on request the tools only the tests and the
# benchmark use (the Knative Operator the parity tests hold knative-fleet against,
# actionlint for the example CI workflow, the Pulumi binaries with toolchain/patches/).
# A warm cache makes this a no-op.
#
#   toolchain/build.sh            build (or reuse) the lab toolchain, print the bin dir
#   toolchain/build.sh --test-tools
#                                 the same, then build (or reuse) the tests' tools into
#                                 the same bin dir, print it (`make test` runs it)
#   toolchain/build.sh --print    print the bin dir of the current pins, build nothing
#   toolchain/build.sh --home     print the Pulumi home of the patched set (its plugin
#                                 store holds the patched provider; built by --test-tools)
#   toolchain/build.sh --operator print the Knative Operator's data dir of the current pins
#                                 (kodata/ for KO_DATA_PATH, crds/ its CRDs), build nothing
#   toolchain/build.sh --check-downloads
#                                 resolve every module directory the build reads, in the
#                                 current GOMODCACHE, and fail on any empty path (CI runs it
#                                 against an empty module cache)
#   toolchain/build.sh --released print the bin dir of the Pulumi CLI and language host as
#                                 released (no patch; built by the lab toolchain), build nothing
#   toolchain/build.sh --released-home
#                                 print the Pulumi home whose plugin store holds the
#                                 Kubernetes provider as released, build nothing
#   toolchain/build.sh --stock-provider
#                                 build (or reuse) pulumi-kubernetes as released, without
#                                 patch_provider's changes, and print its dir (a benchmark
#                                 holds the two against each other)
#   toolchain/build.sh --wrappers regenerate the wrapper modules from the pins
#
# Module directories always come from `go mod download -json MODULE@VERSION`, which
# downloads and extracts the module; `go list -m` only resolves it and gives an empty
# `.Dir` on a machine that never extracted that module.
#
# Two builds of the same pins (two clones, `make test` beside `make demo`) take a lock
# on the cache entry: one builds, the other waits and reuses its result. Every binary
# is written as `.tmp` and renamed when complete, and the entry is marked complete only
# after everything is in place, so a build that dies leaves nothing a later run takes
# for a finished tool.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=pins.env
source "$HERE/pins.env"

CACHE_ROOT="${KNATIVE_FLEET_CACHE:-$HOME/.cache/knative-fleet}"
# The cache key covers only what changes the binaries: the pins and this script without
# their comment-only lines, and each patch from its first `--- ` line on (its `# ` header
# left out), so editing a comment or a patch's header does not rebuild the toolchain.
KEY="$(cd "$HERE" && {
  grep -v '^[[:space:]]*#' pins.env
  grep -v '^[[:space:]]*#' build.sh
  for p in patches/*/*.patch; do sed -n '/^--- /,$p' "$p"; done
} | sha256sum | cut -c1-16)"
OUT="$CACHE_ROOT/toolchain/$KEY"
BIN="$OUT/bin"
# The patched set (the tests' tools): the CLI and language host in BIN, the provider not
# on PATH: Pulumi loads it from its own plugin store in this home, as a released plugin,
# instead of warning about a plugin found on PATH.
PLUGINS="$OUT/plugins"
PULUMI_HOME_DIR="$OUT/pulumi-home"
# The Knative Operator's release data (kodata) and CRDs, copied out of its module.
OPERATOR_DIR="$OUT/knative-operator"
# The Pulumi CLI, its language host and the Kubernetes provider exactly as released (the
# same pinned modules without toolchain/patches/): what a user runs, and what the lab's
# stacks run unless KNATIVE_FLEET_BINARIES=patched.
RELEASED="$OUT/released"
RELEASED_BIN="$RELEASED/bin"
RELEASED_HOME="$RELEASED/pulumi-home"

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod GOSUMDB=off GOPROXY="${GOPROXY:-https://proxy.golang.org}"
# The build is CPU-bound on a small machine: the compiler spends less time in its own
# garbage collector with more headroom (memory is plentiful next to two cores), and
# debug info that `-ldflags -w` drops at link time is not generated in the first place.
export GOGC=400
GCFLAGS="all=-dwarf=false"
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true PULUMI_SKIP_UPDATE_CHECK=true

log() { echo "toolchain: $*" >&2; }

# wrapper NAME "MODULE VERSION"... [-- REPLACE_LINE...]: a module that requires each
# MODULE so its commands can be built despite replace lines in MODULE's own go.mod.
wrapper() {
  local name="$1"; shift
  local dir="$HERE/modules/$name" requires=()
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do requires+=("$1"); shift; done
  [ "$#" -gt 0 ] && shift
  mkdir -p "$dir"
  {
    echo "// Generated by toolchain/build.sh --wrappers from toolchain/pins.env."
    echo "module knative-fleet/toolchain/$name"
    echo
    echo "go 1.26.0"
    echo
    if [ "${#requires[@]}" -eq 1 ]; then
      echo "require ${requires[0]}"
    else
      echo "require ("
      printf '\t%s\n' "${requires[@]}"
      echo ")"
    fi
    if [ "$#" -gt 0 ]; then
      echo
      echo "replace ("
      printf '\t%s\n' "$@"
      echo ")"
    fi
  } > "$dir/go.mod"
  rm -f "$dir/go.sum"
}

# module_json FIELD MODULE@VERSION: downloads the module and prints FIELD (Dir, GoMod)
# of `go mod download -json`; fails when the field is empty.
module_json() {
  local field="$1" mod="$2" value scratch
  scratch="$(mktemp -d)"
  value="$(cd "$scratch" && go mod init scratch >/dev/null 2>&1 && go mod download -json "$mod" \
    | sed -n 's/^[[:space:]]*"'"$field"'": "\(.*\)",\{0,1\}$/\1/p')" || true
  rm -rf "$scratch"
  if [ -z "$value" ] || [ ! -e "$value" ]; then
    log "go mod download gave no $field for $mod"; return 1
  fi
  echo "$value"
}

sdk_dir() { module_json Dir "github.com/pulumi/pulumi/sdk/v3@$PULUMI_SDK_VERSION"; }
cli_pkg_dir() { module_json Dir "github.com/pulumi/pulumi/pkg/v3@$PULUMI_VERSION"; }
langhost_sdk_dir() { module_json Dir "github.com/pulumi/pulumi/sdk/v3@$PULUMI_LANGHOST_SDK_VERSION"; }
provider_dir() { module_json Dir "github.com/pulumi/pulumi-kubernetes/provider/v4@$PULUMI_KUBERNETES_PROVIDER_MODULE"; }
operator_dir() { module_json Dir "knative.dev/operator@$KNATIVE_OPERATOR_VERSION"; }

k8s_replaces() {
  # Every k8s.io/<staging> module k8s.io/kubernetes replaces with ./staging is
  # published as k8s.io/<staging> $K8S_STAGING_VERSION.
  local gomod
  gomod="$(module_json GoMod "k8s.io/kubernetes@$K8S_VERSION")"
  sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1 => \1 '"$K8S_STAGING_VERSION"'#p' "$gomod"
}

gen_wrappers() {
  mapfile -t reps < <(k8s_replaces)
  # kwok and the secretreader plugin share the Kubernetes module graph (docs/toolchain.md, "How it is built").
  wrapper k8s "k8s.io/kubernetes $K8S_VERSION" "sigs.k8s.io/kwok $KWOK_VERSION" \
    "sigs.k8s.io/cluster-inventory-api $CLUSTER_INVENTORY_API_VERSION" -- "${reps[@]}"
  wrapper etcd "go.etcd.io/etcd/server/v3 $ETCD_VERSION" -- \
    "go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 $ETCD_VERSION" \
    "go.etcd.io/etcd/client/pkg/v3 => go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION" \
    "go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 $ETCD_VERSION" \
    "go.etcd.io/etcd/pkg/v3 => go.etcd.io/etcd/pkg/v3 $ETCD_VERSION"
  wrapper knative-operator "knative.dev/operator $KNATIVE_OPERATOR_VERSION"
  wrapper actionlint "github.com/rhysd/actionlint $ACTIONLINT_VERSION"
  log "wrappers regenerated; run toolchain/build.sh to resolve go.sum"
}

# gobuild WRAPPER LDFLAGS PACKAGE...: builds every main package in one `go build`
# (shared package graph, links in parallel) into a scratch dir, then moves each
# binary into BIN. Skipped when every binary is already there.
gobuild() {
  local name="$1" ldflags="$2"; shift 2
  local pkg missing=()
  for pkg in "$@"; do [ -x "$BIN/$(basename "$pkg")" ] || missing+=("$pkg"); done
  [ "${#missing[@]}" -gt 0 ] || return 0
  local tmp="$OUT/tmp-$name" start=$SECONDS
  rm -rf "$tmp" && mkdir -p "$tmp"
  log "building ${missing[*]##*/} ($name)"
  (cd "$HERE/modules/$name" && go build -trimpath -gcflags "$GCFLAGS" -ldflags "-s -w $ldflags" -o "$tmp/" "${missing[@]}")
  for pkg in "${missing[@]}"; do mv "$tmp/$(basename "$pkg")" "$BIN/"; done
  rm -rf "$tmp"
  log "built ${missing[*]##*/} in $((SECONDS - start))s"
}

# gobuild_as WRAPPER OUTPUT PACKAGE LDFLAGS: one binary whose package path ends in
# a generic name (".../cmd/plugin").
gobuild_as() {
  local name="$1" out="$2" pkg="$3" ldflags="$4"
  [ -x "$BIN/$out" ] && return 0
  local start=$SECONDS
  log "building $out ($name)"
  (cd "$HERE/modules/$name" && go build -trimpath -gcflags "$GCFLAGS" -ldflags "-s -w $ldflags" -o "$BIN/$out.tmp" "$pkg")
  mv "$BIN/$out.tmp" "$BIN/$out"
  log "built $out in $((SECONDS - start))s"
}

build_k8s() {
  local v="${K8S_VERSION#v}" major minor
  major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
  local ld=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  ld+=" -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=$K8S_VERSION"
  # kubectl: kwokctl's `kubectl` and the benchmark's kubectl baseline use it. kwok and
  # kwokctl come from the same module graph, so the client libraries compile once.
  gobuild k8s "$ld" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
    sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl
  # Only the plugin the lab's provider file names; kubeconfig-secretreader is not used.
  # Its packages are already compiled by the build above: this step is its link.
  gobuild_as k8s secretreader sigs.k8s.io/cluster-inventory-api/plugins/secretreader/cmd/plugin ""
}

build_etcd() { gobuild_as etcd etcd go.etcd.io/etcd/server/v3 ""; }

# Checks the example GitHub Actions workflow (.github/workflows/) in the tests.
build_actionlint() {
  gobuild actionlint "-X github.com/rhysd/actionlint.version=$ACTIONLINT_VERSION" \
    github.com/rhysd/actionlint/cmd/actionlint
}

build_pulumi() {
  build_cli "$BIN" patch_cli
  build_langhost "$BIN" patch_langhost
  python_scripts "$BIN"
}

# The CLI and the language host as released, into their own bin dir.
build_released_pulumi() {
  mkdir -p "$RELEASED_BIN"
  build_cli "$RELEASED_BIN" copy_only
  build_langhost "$RELEASED_BIN" copy_only
  python_scripts "$RELEASED_BIN"
}

# python_scripts DEST: the language host runs `pulumi-language-python-exec`; Python
# dynamic providers run `pulumi-resource-pulumi-python`. Both are scripts of the SDK
# module, found next to the `pulumi` binary as bundled plugins.
python_scripts() {
  local dest="$1" sdk f
  sdk="$(sdk_dir)"
  for f in cmd/pulumi-language-python-exec dist/pulumi-resource-pulumi-python; do
    [ -x "$dest/${f#*/}" ] || install -m 755 "$sdk/python/$f" "$dest/"
  done
}

# from_copy DEST OUT WRAPPER VERSION PACKAGE COPY_FN DIR_FN FROM TO [REPLACES]:
# builds PACKAGE into DEST/OUT from a scratch copy of the WRAPPER module that holds, at TO,
# a copy of FROM (a path in DIR_FN's module directory) made by COPY_FN (patch_* applies
# the toolchain's patches, copy_only none). REPLACES, when given, is the module that copy
# stands in for. VERSION is the Pulumi version the binary reports. The patched and the
# released builds compile the same copied paths (-trimpath), so every package the patches
# do not touch is compiled once for both.
from_copy() {
  local dest="$1" out="$2" wrapper="$3" version="$4" pkg="$5" copy_fn="$6" dir_fn="$7"
  local from="$8" to="$9" replaces="${10:-}" work start=$SECONDS src
  [ -x "$dest/$out" ] && return 0
  work="$(mktemp -d "$OUT/$out-src.XXXXXX")"
  cp "$HERE/modules/$wrapper/go.mod" "$HERE/modules/$wrapper/go.sum" "$work/"
  src="$("$dir_fn")"
  "$copy_fn" "$src/$from" "$work/$to"
  [ -z "$replaces" ] || echo "replace $replaces => ./$to" >> "$work/go.mod"
  log "building $out ($copy_fn)"
  (cd "$work" && go build -trimpath -gcflags "$GCFLAGS" -o "$dest/$out.tmp" \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" \
    "$pkg")
  mv "$dest/$out.tmp" "$dest/$out"
  rm -rf "$work"
  log "built $out ($copy_fn) in $((SECONDS - start))s"
}

# build_cli DEST COPY_FN: the Pulumi CLI, from a copy of its pkg/v3 module (patch_cli:
# with patches/pulumi-cli/same-step-events-without-deep-copy.patch).
build_cli() {
  from_copy "$1" pulumi pulumi-cli "$PULUMI_VERSION" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi \
    "$2" cli_pkg_dir . pkg github.com/pulumi/pulumi/pkg/v3
}

# build_langhost DEST COPY_FN: the Python language host (patch_langhost: with
# patches/pulumi-language-python/lists-packages-without-pip.patch).
build_langhost() {
  from_copy "$1" pulumi-language-python pulumi-langhost "$PULUMI_LANGHOST_SDK_VERSION" \
    ./python/cmd/pulumi-language-python "$2" langhost_sdk_dir \
    python/cmd/pulumi-language-python python/cmd/pulumi-language-python
}

# The Knative Operator, run out-of-cluster against a lab spoke by the parity tests: its
# binary, and beside it the release files it installs (KO_DATA_PATH) and its CRDs, copied
# from the module so the cache entry does not depend on GOMODCACHE staying in place.
build_operator() {
  gobuild_as knative-operator knative-operator knative.dev/operator/cmd/operator ""
  [ -d "$OPERATOR_DIR" ] && return 0
  local src tmp="$OPERATOR_DIR.tmp"
  src="$(operator_dir)"
  rm -rf "$tmp" && mkdir -p "$tmp/crds"
  cp -R "$src/cmd/operator/kodata" "$tmp/kodata"
  cp "$src"/config/crd/bases/*.yaml "$tmp/crds/"
  chmod -R u+w "$tmp"
  mv "$tmp" "$OPERATOR_DIR"
}

# patch_copy SRC DST SET STRIP: a writable copy of SRC at DST with every patch of
# patches/SET/ applied (docs/toolchain.md), each by `git apply` (git is already
# needed to clone the repo; `patch` may not be installed), which takes no fuzz: a new
# pin whose code moved fails here instead of building something else. git apply skips
# each patch's `# ` header, which says what the patch changes and why.
patch_copy() {
  local src="$1" dst="$2" set="$3" strip="$4" p
  rm -rf "$dst" && mkdir -p "$(dirname "$dst")"
  if ! { cp -r "$src" "$dst" && chmod -R u+w "$dst"; }; then
    log "cannot copy $src for patches/$set"
    return 1
  fi
  for p in "$HERE/patches/$set"/*.patch; do
    # Outside any repository (the ceiling stops the search above dst), git apply
    # patches the files under the current directory.
    if ! (cd "$dst" && GIT_CEILING_DIRECTORIES="$(dirname "$dst")" git apply -p"$strip" "$p") >&2; then
      log "$(basename "$p") no longer applies to $set: review toolchain/patches/$set"
      rm -rf "$dst"
      return 1
    fi
  done
}

# pulumi-kubernetes, with patches/pulumi-kubernetes/{create-keeps-the-schema,await-returns-the-written-version}.patch.
patch_provider() { patch_copy "$1" "$2" pulumi-kubernetes 1; }

# The language host's package directory, its patches' paths taken from the SDK module's
# root (python/cmd/pulumi-language-python/main.go).
patch_langhost() { patch_copy "$1" "$2" pulumi-language-python 4; }

# The CLI's pkg/v3 module, its patches' paths taken from the module's root.
patch_cli() { patch_copy "$1" "$2" pulumi-cli 1; }

# copy_only SRC DST: a writable copy of SRC at DST, as released.
copy_only() {
  rm -rf "$2" && mkdir -p "$(dirname "$2")"
  if ! { cp -r "$1" "$2" && chmod -R u+w "$2"; }; then
    log "cannot copy $1"
    return 1
  fi
}

# The provider's main package embeds schema-embed.json and terraform-mapping-embed.json,
# which its module zip does not ship; its own generate.go makes them from the committed
# schema.json and terraform-mapping.json. The module cache is read-only, so main.go is
# built from a scratch copy of the wrapper module (outside the repo), against the patched
# copy of the provider module (patch_provider), or against a plain copy of the module as
# released (the released set; `--stock-provider`): the same copied paths, so the packages
# the patches do not touch compile once for both.
# provider_into DIR patched|released
provider_into() {
  local dest="$1" kind="$2" work="$OUT/provider-src-$2" pdir start=$SECONDS
  [ -x "$dest/pulumi-resource-kubernetes" ] && return 0
  rm -rf "$work" && mkdir -p "$work/gen" "$work/cmd/pulumi-resource-kubernetes" "$dest"
  cp "$HERE/modules/pulumi-provider/go.mod" "$HERE/modules/pulumi-provider/go.sum" "$work/"
  pdir="$(provider_dir)"
  if [ "$kind" = patched ]; then
    patch_provider "$pdir" "$work/provider"
  else
    copy_only "$pdir" "$work/provider"
  fi
  echo "replace github.com/pulumi/pulumi-kubernetes/provider/v4 => ./provider" >> "$work/go.mod"
  pdir="$work/provider"
  install -m 644 "$pdir/cmd/pulumi-resource-kubernetes/main.go" "$work/cmd/pulumi-resource-kubernetes/"
  install -m 644 "$pdir"/cmd/pulumi-resource-kubernetes/{generate.go,schema.json,terraform-mapping.json} "$work/gen/"
  # Built with the provider's own flags, not `go run`: the packages it imports (the
  # codegen schema and the SDK under it) are then compiled once, for both.
  log "generating the provider's embedded schema ($kind)"
  (cd "$work/gen" && go build -trimpath -gcflags "$GCFLAGS" -ldflags "-s -w" -o generate ./generate.go \
    && VERSION="$PULUMI_KUBERNETES_VERSION" ./generate \
    && mv schema-embed.json terraform-mapping-embed.json ../cmd/pulumi-resource-kubernetes/)
  log "building pulumi-resource-kubernetes ($kind)"
  (cd "$work" && go build -trimpath -gcflags "$GCFLAGS" -o "$dest/pulumi-resource-kubernetes.tmp" \
    -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$PULUMI_KUBERNETES_VERSION" \
    ./cmd/pulumi-resource-kubernetes)
  mv "$dest/pulumi-resource-kubernetes.tmp" "$dest/pulumi-resource-kubernetes"
  rm -rf "$work"
  log "built pulumi-resource-kubernetes ($kind) in $((SECONDS - start))s"
}

build_provider() { provider_into "$PLUGINS" patched; }
build_released_provider() { provider_into "$RELEASED/plugins" released; }

# install_plugins BIN PLUGINS HOME: installs the provider of PLUGINS into the Pulumi home
# HOME as the released plugin kubernetes v$PULUMI_KUBERNETES_VERSION (what the Python SDK
# asks for), with the CLI of BIN.
install_plugins() {
  local bin="$1" plugins="$2" home="$3"
  rm -rf "$home.tmp" && mkdir -p "$home.tmp"
  PULUMI_HOME="$home.tmp" "$bin/pulumi" plugin install resource kubernetes \
    "v$PULUMI_KUBERNETES_VERSION" --file "$plugins/pulumi-resource-kubernetes" >/dev/null
  rm -rf "$home" && mv "$home.tmp" "$home"
}

# Pulumi 3.259 writes an encrypted debug log of every run into $PULUMI_HOME/logs, every
# property of every object (35-100 MB a fleet run), unconditionally: it costs a no-op
# preview about half its CPU (docs/performance.md, "The released binaries, and the patched
# ones beside them"). Pulumi goes without it when that path cannot be made a directory, so
# each of the toolchain's homes holds an empty file of that name, as the README tells users
# to do with theirs. KNATIVE_FLEET_PULUMI_LOGS=keep keeps the logs (a support case);
# `--logtostderr -v=N` logs one run either way.
# home_logs HOME
home_logs() {
  local logs="$1/logs"
  [ -d "$1" ] || return 0
  if [ "${KNATIVE_FLEET_PULUMI_LOGS:-}" = keep ]; then
    if [ -f "$logs" ]; then rm -f "$logs"; fi
    return 0
  fi
  if [ -d "$logs" ]; then rm -rf "$logs"; fi
  if [ ! -e "$logs" ]; then : > "$logs"; fi
}

# Runs every module-resolution step of the build (not the compiles) and fails on an
# empty path: what a machine with an empty module cache would see.
check_downloads() {
  local d
  d="$(sdk_dir)"; test -f "$d/python/cmd/pulumi-language-python-exec"
  test -f "$d/python/dist/pulumi-resource-pulumi-python"
  d="$(cli_pkg_dir)"; test -f "$d/engine/events.go"
  d="$(langhost_sdk_dir)"; test -f "$d/python/cmd/pulumi-language-python/main.go"
  d="$(provider_dir)"; test -f "$d/cmd/pulumi-resource-kubernetes/main.go"
  test -f "$d/cmd/pulumi-resource-kubernetes/generate.go"
  d="$(module_json GoMod "k8s.io/kubernetes@$K8S_VERSION")"; test -s "$d"
  d="$(operator_dir)"; test -d "$d/cmd/operator/kodata/knative-serving"
  test -f "$d/config/crd/bases/operator.knative.dev_knativeservings.yaml"
  log "every module directory the build reads was downloaded (GOMODCACHE=$(go env GOMODCACHE))"
}

# lane NAME FUNCTION...: runs the functions in order in the background, its log
# lines prefixed with the lane's name.
LANES=()
lane() {
  local name="$1"; shift
  ( set -euo pipefail; for f in "$@"; do "$f"; done ) 2> >(sed -u "s/^/[$name] /" >&2) &
  LANES+=("$!:$name")
}

# wait_lanes: waits for every lane started; fails naming those that failed.
wait_lanes() {
  local failed="" entry
  for entry in "${LANES[@]}"; do
    wait "${entry%%:*}" || failed+=" ${entry#*:}"
  done
  LANES=()
  if [ -n "$failed" ]; then log "failed:$failed (finished tools are kept; run again)"; return 1; fi
}

# lock: holds the cache entry's lock (fd 9) until the script exits.
lock() {
  mkdir -p "$CACHE_ROOT/toolchain"
  exec 9>"$OUT.lock"
  if ! flock -n 9; then
    log "another build of these pins is running; waiting for it ($OUT.lock)"
    flock 9
  fi
}

# The lab toolchain: what `make demo` and the lab need, with the Pulumi CLI, its language
# host and the Kubernetes provider exactly as released (what users run).
main() {
  lock
  if [ -f "$OUT/.complete" ]; then home_logs "$RELEASED_HOME"; home_logs "$PULUMI_HOME_DIR"; echo "$BIN"; return 0; fi
  mkdir -p "$BIN"
  local start=$SECONDS
  # Three lanes on separate module graphs: while one links (one core) or downloads
  # (network), the others compile. Peak memory is the provider's link (~4 GB) plus
  # one Kubernetes link.
  lane k8s build_k8s
  lane provider build_released_provider
  lane tools build_etcd build_released_pulumi
  wait_lanes
  install_plugins "$RELEASED_BIN" "$RELEASED/plugins" "$RELEASED_HOME"
  home_logs "$RELEASED_HOME"
  touch "$OUT/.complete"
  log "toolchain ready in $((SECONDS - start))s: $BIN"
  echo "$BIN"
}

# The tools only the tests and the benchmark use, on top of the lab toolchain: the Knative
# Operator (its own module graph: about a tenth of the cold compile work), actionlint, and
# the Pulumi CLI, language host and Kubernetes provider with toolchain/patches/ (the
# benchmark holds them beside the released set). Not built for `make demo`, whose first
# run on a new machine waits for its toolchain.
test_tools() {
  main >/dev/null
  if [ -f "$OUT/.test-tools-complete" ]; then echo "$BIN"; return 0; fi
  local start=$SECONDS
  lane operator build_operator build_actionlint
  lane patched-pulumi build_pulumi
  lane patched-provider build_provider
  wait_lanes
  install_plugins "$BIN" "$PLUGINS" "$PULUMI_HOME_DIR"
  home_logs "$PULUMI_HOME_DIR"
  touch "$OUT/.test-tools-complete"
  log "the tests' tools ready in $((SECONDS - start))s: $BIN"
  echo "$BIN"
}

case "${1:-}" in
  --print) echo "$BIN" ;;
  --home) echo "$PULUMI_HOME_DIR" ;;
  --test-tools) test_tools ;;
  --operator) echo "$OPERATOR_DIR" ;;
  --check-downloads) check_downloads ;;
  --released) echo "$RELEASED_BIN" ;;
  --released-home) echo "$RELEASED_HOME" ;;
  --stock-provider) build_released_provider >&2 && echo "$RELEASED/plugins" ;;
  --wrappers) gen_wrappers ;;
  "") main ;;
  *) echo "usage: $0 [--test-tools|--print|--home|--released|--released-home|--operator|--check-downloads|--stock-provider|--wrappers]" >&2
     exit 2 ;;
esac
