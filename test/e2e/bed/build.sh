#!/usr/bin/env bash
# Builds (once) the real servers the karpctl e2e tests run against:
#   kube-apiserver, etcd, kube-controller-manager   (Go module test/e2e/kube)
#   helm                                            (go install helm@$HELM_VERSION)
#   moto_server                                     (Python venv, pinned moto[server])
#   kube-scheduler                                  (Go module test/e2e/kube, for the Karpenter bed)
#   karpenter-controller                            (Go module test/e2e/karpenter: the real
#                                                    aws/karpenter-provider-aws cmd/controller)
#
# Everything goes to ${KARPCTL_E2E_CACHE:-~/.cache/karpctl-e2e}:
#   <hash>/bin/{kube-apiserver,etcd,kube-controller-manager,helm[,kubectl]}
#   venv-moto-<version>/bin/moto_server
#   karpenter-<khash>/bin/karpenter-controller
# where <hash> = sha256(go.mod, go.sum, helm version, this script's BUILD_REV) of test/e2e/kube and
# <khash> = sha256(go.mod, go.sum, KARPENTER_VERSION, KARPENTER_BUILD_REV) of test/e2e/karpenter: the
# controller has its own key, so changing it never rebuilds kube-apiserver (and vice versa).
# Each artifact is skipped when already present, so a warm run costs ~0s.
# On success prints the line `KARPCTL_E2E_BIN=<dir>` last and writes the same
# directory to <cache>/current-bin (the TypeScript harness reads it).
#
# Cold build on 2 cores: ~15-25 minutes, plus ~8-15 for the Karpenter controller. Needs: go (>= 1.24), python3 (>= 3.9),
# network access to the Go module proxy and PyPI only.
#
# Env knobs: KARPCTL_E2E_CACHE, KARPCTL_E2E_KUBECTL=1 (also build kubectl),
#            KARPCTL_E2E_NO_KCM=1 (skip kube-controller-manager),
#            KARPCTL_E2E_NO_KARPENTER=1 (skip the Karpenter controller and kube-scheduler),
#            KARPCTL_E2E_PYTHON (python interpreter for the venv).
set -euo pipefail

HELM_VERSION=v3.22.0
HELM_K8S_MINOR=37 # helm v3.22.0 builds with k8s.io/client-go v0.37.0 (its Makefile's K8S_MODULES_MINOR_VER)
MOTO_VERSION=5.2.1
K8S_VERSION=v1.34.4
BUILD_REV=2 # bump when build flags below change
# The real Karpenter controller: its own module, its own cache key (never part of $hash above).
KARPENTER_VERSION=v1.14.1
KARPENTER_BUILD_REV=1 # bump when the controller's build flags change

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kube_mod="$here/../kube"
cache="${KARPCTL_E2E_CACHE:-$HOME/.cache/karpctl-e2e}"

log() { printf '[%s] build: %s\n' "$(date '+%H:%M:%S')" "$*" >&2; }

hash="$(cat "$kube_mod/go.mod" "$kube_mod/go.sum" <(echo "helm=$HELM_VERSION/$HELM_K8S_MINOR rev=$BUILD_REV") | sha256sum | cut -c1-16)"
bin="$cache/$hash/bin"
mkdir -p "$bin" "$cache/tmp"

# one build at a time (parallel CI jobs / test files sharing a cache)
if command -v flock >/dev/null; then
  exec 9>"$cache/.build.lock"
  if ! flock -n 9; then
    log "another build.sh holds $cache/.build.lock; waiting ..."
    flock 9
  fi
fi

# ---------------------------------------------------------------- moto venv
venv="$cache/venv-moto-$MOTO_VERSION"
build_moto() {
  if [[ -f "$venv/.karpctl-ok" && -x "$venv/bin/moto_server" ]]; then
    log "moto: cached ($venv)"
    return
  fi
  local py t0=$SECONDS
  py="${KARPCTL_E2E_PYTHON:-$(command -v python3 || command -v python)}"
  log "moto: creating venv with $py ($("$py" --version 2>&1)), moto[server]==$MOTO_VERSION ..."
  rm -rf "$venv"
  if ! "$py" -m venv "$venv"; then
    log "ERROR: '$py -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv; or set KARPCTL_E2E_PYTHON)"
    return 1
  fi
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q "moto[server]==$MOTO_VERSION"
  "$venv/bin/python" -c "import moto; assert moto.__version__ == '$MOTO_VERSION', moto.__version__"
  touch "$venv/.karpctl-ok" # written last: a half-built venv is rebuilt next time
  log "moto: done in $((SECONDS - t0))s"
}
build_moto &
moto_pid=$!

# ---------------------------------------------------------------- Go binaries
command -v go >/dev/null || { log "ERROR: go not found on PATH"; exit 1; }
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

# kube version stamping, as hack/lib/version.sh does, so that /version reports
# v1.34.4 (helm's .Capabilities.KubeVersion and karpctl's checks read it).
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  kube_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=0000000000000000000000000000000000000000"
  kube_ldflags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

build_go() { # name package ldflags
  local name="$1" pkg="$2" ldflags="$3"
  if [[ -x "$bin/$name" ]]; then log "$name: cached ($bin/$name)"; return; fi
  log "$name: building $pkg ..."
  local t0=$SECONDS
  (cd "$kube_mod" && go build -trimpath -ldflags="$ldflags" -o "$bin/.$name.tmp" "$pkg")
  mv -f "$bin/.$name.tmp" "$bin/$name"
  log "$name: done in $((SECONDS - t0))s"
}

T0=$SECONDS
log "go: $(go version); cache dir $bin"
if [[ ! -x "$bin/etcd" || ! -x "$bin/kube-apiserver" ]]; then
  log "downloading Go modules (go mod download) ..."
  (cd "$kube_mod" && go mod download)
fi
build_go etcd go.etcd.io/etcd/server/v3 "-s -w"
build_go kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kube_ldflags"

if [[ -x "$bin/helm" ]]; then
  log "helm: cached ($bin/helm)"
else
  log "helm: go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION ..."
  t0=$SECONDS
  mkdir -p "$cache/tmp/helm-gobin"
  # Stamp like helm's release Makefile does, so this helm behaves like the
  # published binary: `helm version` = v3.22.0 and `helm template`/lint default
  # to the Kubernetes minor of helm's own client-go (v0.37 → 1.37) instead of
  # the source default 1.20.
  helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    helm_ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$HELM_K8S_MINOR"
  done
  GOBIN="$cache/tmp/helm-gobin" go install -trimpath -ldflags="$helm_ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  mv -f "$cache/tmp/helm-gobin/helm" "$bin/helm"
  log "helm: done in $((SECONDS - t0))s"
fi

if [[ "${KARPCTL_E2E_NO_KCM:-}" != 1 ]]; then
  build_go kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kube_ldflags"
fi
if [[ "${KARPCTL_E2E_KUBECTL:-}" == 1 ]]; then
  build_go kubectl k8s.io/kubernetes/cmd/kubectl "$kube_ldflags"
fi

# ---------------------------------------------------------------- Karpenter bed
# kube-scheduler binds pods to the nodes Karpenter launches and marks the others Unschedulable (what
# Karpenter provisions for); a separate artifact in $bin, so the kube hash inputs stay as they are.
karpenter_bin=""
if [[ "${KARPCTL_E2E_NO_KARPENTER:-}" != 1 ]]; then
  build_go kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$kube_ldflags"
  karp_mod="$here/../karpenter"
  khash="$(cat "$karp_mod/go.mod" "$karp_mod/go.sum" <(echo "karpenter=$KARPENTER_VERSION rev=$KARPENTER_BUILD_REV") | sha256sum | cut -c1-16)"
  kbin="$cache/karpenter-$khash/bin"
  karpenter_bin="$kbin/karpenter-controller"
  if [[ -x "$karpenter_bin" ]]; then
    log "karpenter-controller: cached ($karpenter_bin)"
  else
    mkdir -p "$kbin"
    log "karpenter-controller: building github.com/aws/karpenter-provider-aws/cmd/controller@$KARPENTER_VERSION ..."
    t0=$SECONDS
    # Without -X …operator.Version the controller reports "unspecified".
    (cd "$karp_mod" && go build -trimpath \
      -ldflags="-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=$KARPENTER_VERSION" \
      -o "$kbin/.karpenter-controller.tmp" github.com/aws/karpenter-provider-aws/cmd/controller)
    mv -f "$kbin/.karpenter-controller.tmp" "$karpenter_bin"
    log "karpenter-controller: done in $((SECONDS - t0))s"
  fi
fi

# moto venv: built in the background while Go compiles (network-bound)
wait "$moto_pid" || { log "ERROR: moto venv failed"; exit 1; }

echo "$bin" > "$cache/current-bin.tmp" && mv -f "$cache/current-bin.tmp" "$cache/current-bin"
echo "$venv" > "$cache/current-venv.tmp" && mv -f "$cache/current-venv.tmp" "$cache/current-venv"
echo "$karpenter_bin" > "$cache/current-karpenter.tmp" && mv -f "$cache/current-karpenter.tmp" "$cache/current-karpenter"
log "all artifacts ready in $((SECONDS - T0))s"
echo "KARPCTL_E2E_BIN=$bin"
echo "KARPCTL_E2E_VENV=$venv"
echo "KARPCTL_E2E_KARPENTER=$karpenter_bin"
