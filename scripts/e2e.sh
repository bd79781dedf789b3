#!/usr/bin/env bash
# End-to-end tests against real servers (moto_server, etcd, kube-apiserver,
# kube-controller-manager, helm). `npm run test:e2e` calls this.
#   1. test/e2e/bed/build.sh  — builds/caches the servers (cold: 15–25 min on 2 cores)
#   2. npm run build (dist/, which bin/run.js loads)
#   3. node --test over test/e2e/**/*.e2e.test.ts, one file at a time
# Files named as arguments run alone; other arguments go to `node --test` (e.g. --test-name-pattern=smoke).
# Env: KARPCTL_E2E_CACHE (cache dir), KARPCTL_E2E_KEEP=1 (keep temp dirs/logs),
#      KARPCTL_E2E_VERBOSE=1, KARPCTL_E2E_SKIP_NPM_BUILD=1 (do not rebuild dist/).
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ts() { date '+%H:%M:%S'; }
command -v node >/dev/null || { echo "e2e: 'node' is not on PATH: install Node.js 20.12 or newer" >&2; exit 2; }
# Node, the dependencies, the reference data, go, python3 (venv), kubectl, aws, tmux: one line each.
node scripts/preflight.mjs e2e

echo "[$(ts)] e2e: building/locating servers ..." >&2
t0=$SECONDS
build_out="$(bash test/e2e/bed/build.sh)"
KARPCTL_E2E_BIN="$(sed -n 's/^KARPCTL_E2E_BIN=//p' <<<"$build_out")"
KARPCTL_E2E_VENV="$(sed -n 's/^KARPCTL_E2E_VENV=//p' <<<"$build_out")"
KARPCTL_E2E_KARPENTER="$(sed -n 's/^KARPCTL_E2E_KARPENTER=//p' <<<"$build_out")"
export KARPCTL_E2E_BIN KARPCTL_E2E_VENV KARPCTL_E2E_KARPENTER
echo "[$(ts)] e2e: servers ready in $((SECONDS - t0))s ($KARPCTL_E2E_BIN)" >&2

if [[ "${KARPCTL_E2E_SKIP_NPM_BUILD:-}" != 1 ]]; then
  echo "[$(ts)] e2e: npm run build (scenarios run bin/run.js → dist/) ..." >&2
  npm run --silent build >&2
fi

shopt -s globstar nullglob
# Files named on the command line run alone (`npm run test:e2e -- test/e2e/lock.e2e.test.ts`); every
# other argument goes to `node --test` (e.g. --test-name-pattern=smoke).
files=() opts=()
for a in "$@"; do
  if [[ "$a" == *.e2e.test.ts ]]; then files+=("$a"); else opts+=("$a"); fi
done
((${#files[@]})) || files=(test/e2e/**/*.e2e.test.ts)
if ((${#files[@]} == 0)); then
  echo "e2e: no test/e2e/**/*.e2e.test.ts files" >&2
  exit 1
fi
# Node 20's --test does not expand globs itself; one file at a time (2 cores, one bed at a time).
echo "[$(ts)] e2e: running ${#files[@]} file(s)" >&2
node --import tsx --test --test-concurrency=1 --test-reporter=spec "${opts[@]}" "${files[@]}"
