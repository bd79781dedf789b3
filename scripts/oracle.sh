#!/usr/bin/env bash
# `npm run test:oracle`: builds the oracle (Karpenter v1.14.1's scheduler as a library, test/oracle) once,
# cached under ${KARPCTL_E2E_CACHE:-~/.cache/karpctl-e2e}/oracle-<hash> (hash of its go.mod, go.sum and
# sources), then compares `karpctl why` with it on generated cases (test/oracle/run.ts).
#
# Env: KARPCTL_ORACLE_CASES (default 2000), KARPCTL_ORACLE_SEED (default 1), KARPCTL_ORACLE_BIN (use this
# binary, no build). Needs go (>= 1.26.6) and the Go module proxy on a cold cache (~10 min on 2 cores).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/oracle"
cache="${KARPCTL_E2E_CACHE:-$HOME/.cache/karpctl-e2e}"

log() { printf '[%s] oracle: %s\n' "$(date '+%H:%M:%S')" "$*" >&2; }

if [[ -z "${KARPCTL_ORACLE_BIN:-}" ]]; then
  command -v go >/dev/null || { log "ERROR: go not found on PATH (the oracle is a Go program: install go >= 1.26.6)"; exit 1; }
  hash="$(cd "$mod" && cat go.mod go.sum $(ls *.go | sort) | sha256sum | cut -c1-16)"
  dir="$cache/oracle-$hash"
  export KARPCTL_ORACLE_BIN="$dir/oracle"
  if [[ ! -x "$KARPCTL_ORACLE_BIN" ]]; then
    mkdir -p "$dir"
    log "building $KARPCTL_ORACLE_BIN (sigs.k8s.io/karpenter v1.14.1) ..."
    t0=$SECONDS
    (cd "$mod" && CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
      go build -trimpath -ldflags '-s -w' -o "$dir/.oracle.tmp" .)
    mv "$dir/.oracle.tmp" "$KARPCTL_ORACLE_BIN" # written last: a half-built binary is never used
    log "built in $((SECONDS - t0))s"
  fi
fi
exec node --import tsx "$root/test/oracle/run.ts"
