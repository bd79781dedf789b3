// Where things are: the repository, the Karpenter reference data, the build output.
import { execFileSync } from 'node:child_process'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const BED_DIR = dirname(fileURLToPath(import.meta.url))
/** The karpctl repository root (…/test/e2e/bed → …). */
export const REPO_ROOT = resolve(BED_DIR, '../../..')

import { karpenterFixtures } from '../../helpers/fixtures.js'

export { karpenterFixtures }

export function karpenterChartDir(version: '1.14.1' | '1.0.14' = '1.14.1', chart = 'karpenter'): string {
  return resolve(karpenterFixtures(), `v${version}`, 'charts', chart)
}

export function cloudFormationTemplatePath(): string {
  return resolve(karpenterFixtures(), 'v1.14.1', 'cloudformation.yaml')
}

export interface Artifacts {
  /** directory with kube-apiserver, etcd, helm, kube-controller-manager (optional), kubectl (optional) */
  binDir: string
  /** Python venv with moto[server] */
  venvDir: string
  /** the real Karpenter controller binary; undefined when built with KARPCTL_E2E_NO_KARPENTER=1 */
  karpenterBin?: string
}

let cached: Artifacts | undefined

/**
 * Locates the built servers. Uses KARPCTL_E2E_BIN + KARPCTL_E2E_VENV when both
 * are set (scripts/e2e.sh exports them), else runs build.sh, which returns in
 * well under a second when everything is cached and builds (15–25 min) when not.
 */
export function artifacts(): Artifacts {
  if (cached) return cached
  const bin = process.env.KARPCTL_E2E_BIN
  const venv = process.env.KARPCTL_E2E_VENV
  if (bin && venv) {
    cached = { binDir: bin, venvDir: venv, karpenterBin: process.env.KARPCTL_E2E_KARPENTER || undefined }
    return cached
  }
  const out = execFileSync('bash', [resolve(BED_DIR, 'build.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const get = (k: string): string => {
    const m = new RegExp(`^${k}=(.*)$`, 'm').exec(out)
    if (!m?.[1]) throw new Error(`build.sh did not print ${k}; output:\n${out}`)
    return m[1].trim()
  }
  const karpenterBin = /^KARPCTL_E2E_KARPENTER=(.+)$/m.exec(out)?.[1]?.trim()
  cached = { binDir: get('KARPCTL_E2E_BIN'), venvDir: get('KARPCTL_E2E_VENV'), karpenterBin }
  return cached
}
