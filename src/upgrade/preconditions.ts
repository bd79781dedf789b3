// What must hold before an upgrade changes anything, each judged on its own so the plan lists every
// one that fails at once, with the way out. They are steps of the plan (kind "precondition"): a failing
// one blocks the plan as any blocked step does, before the first write.
import { kubernetesSupport, parseKubernetesMinor, formatMinor, supportRange } from '../checks/lib/compat.js'
import { V1_CRDS } from '../checks/lib/install.js'
import type { Resource, Verdict } from '../plan/types.js'
import { compareVersions } from '../desired/reference-policy.js'
import { parseVersion, type KarpenterVersion } from '../desired/version.js'

export type Judgement = { ok: true; note: string } | { ok: false; blocked: string }

const minorOf = (v: string) => {
  const { major, minor } = parseVersion(v) as KarpenterVersion
  return `${major}.${minor}`
}

/** Both are Karpenter 1.x and the target is not older than what runs. */
export function versionGate(installed: string, target: string): Judgement {
  const from = parseVersion(installed)
  if (!from)
    return {
      ok: false,
      blocked: `the installed chart version ${JSON.stringify(installed)} is not one karpctl can read: run \`karpctl doctor\` to see what is installed`,
    }
  if (from.major !== 1)
    return {
      ok: false,
      blocked: `Karpenter ${installed} is not 1.x: a v0.x install is migrated to v1 in stages (https://karpenter.sh/docs/upgrading/v1-migration/), not upgraded in one step`,
    }
  const to = parseVersion(target)
  if (!to || to.major !== 1) return { ok: false, blocked: `--to ${target} is not a Karpenter 1.x version` }
  if (compareVersions(target, installed) < 0)
    return {
      ok: false,
      blocked: `Karpenter ${installed} runs, newer than --to ${target}: upgrade never goes back (\`helm rollback\` does)`,
    }
  return {
    ok: true,
    note: compareVersions(target, installed) === 0 ? `already ${target}` : `${installed} → ${target}`,
  }
}

/** Whether the upgrade leaves the v1.0.x line, whose CRDs still convert v1beta1. */
export const leavesV10 = (installed: string, target: string) =>
  minorOf(installed) === '1.0' && compareVersions(target, '1.1.0') >= 0

/** How to see whether anything still writes v1beta1: the API server counts requests by version. */
export const V1BETA1_WRITERS_CHECK =
  'kubectl get --raw /metrics | grep apiserver_request_total | grep -E \'group="karpenter\\.(sh|k8s\\.aws)"\' | grep \'version="v1beta1"\' | grep -vE \'verb="(GET|LIST|WATCH)"\''

/**
 * From 1.0.x to 1.1 or later: the 1.1 CRDs serve only v1, so no object may still be stored as v1beta1
 * (`status.storedVersions` of each CRD) — the API server could not read it back. `stored` holds each
 * CRD's storedVersions (absent: the CRD does not exist).
 */
export function storageGate(installed: string, target: string, stored: Record<string, string[]>): Judgement {
  if (!leavesV10(installed, target))
    return { ok: true, note: `not needed: ${installed} → ${target} does not leave the v1.0.x line` }
  const old = Object.entries(stored)
    .filter(([, versions]) => versions.some((v) => v !== 'v1'))
    .map(([name, versions]) => `${name} (${versions.join(', ')})`)
  if (old.length)
    return {
      ok: false,
      blocked: `objects are still stored as v1beta1 in ${old.join(', ')}, and Karpenter ${target} serves only v1: let Karpenter ${installed} rewrite them (or run kube-storage-version-migrator), then once each is stored as v1 set \`kubectl patch crd <name> --subresource=status --type=merge -p '{"status":{"storedVersions":["v1"]}}'\` and run again`,
    }
  return {
    ok: true,
    note: `every Karpenter CRD stores v1 only; make sure nothing still writes v1beta1 (manifests, GitOps, Terraform): Karpenter ${target} refuses it. Check with: ${V1BETA1_WRITERS_CHECK}`,
  }
}

/** The cluster's Kubernetes minor is one the target supports (doctor's compatibility table). */
export function kubernetesGate(target: string, kubernetes: string | undefined): Judgement {
  const k = parseKubernetesMinor(kubernetes)
  const v = parseVersion(target)
  if (!k || !v) return { ok: true, note: 'the Kubernetes version is not known: not checked' }
  const range = supportRange(v)
  const support = kubernetesSupport(v, k)
  const span = range ? `${range.entry.minKubernetes} – ${range.entry.maxKubernetes}` : ''
  if (support === 'too-old')
    return {
      ok: false,
      blocked: `Kubernetes ${formatMinor(k)} is older than Karpenter ${target} supports (${span}): upgrade the cluster first (aws eks update-cluster-version), or choose an older --to`,
    }
  if (support === 'too-new')
    return {
      ok: false,
      blocked: `Kubernetes ${formatMinor(k)} is newer than Karpenter ${target} supports (${span}): choose a newer --to`,
    }
  if (support === 'unknown') return { ok: true, note: `Karpenter ${target} predates the compatibility table` }
  return {
    ok: true,
    note: `Kubernetes ${formatMinor(k)} is supported by ${target} (${span}${range?.reviewed ? '' : ', unreviewed: may be wider'})`,
  }
}

export interface ReleaseStatus {
  name: string
  namespace: string
  status: string
  chartVersion: string
}

/**
 * The release is deployed. A failed revision of the target itself is this upgrade's own, stopped: the
 * run finishes it. A pending one is left to the release step, which rolls back karpctl's own stuck
 * revision or names the tool that holds it.
 */
export function releaseGate(r: ReleaseStatus, target: string): Judgement {
  const where = `release ${r.namespace}/${r.name}`
  if (r.status === 'deployed') return { ok: true, note: `${where} is deployed` }
  if (r.status.startsWith('pending-'))
    return {
      ok: true,
      note: `${where} is ${r.status}: the release step below undoes it first, or says why not`,
    }
  if (r.status === 'failed' && r.chartVersion.replace(/^v/, '') === target.replace(/^v/, ''))
    return { ok: true, note: `${where} failed an earlier upgrade to ${target}: upgraded again` }
  return {
    ok: false,
    blocked: `${where} is ${r.status} (chart ${r.chartVersion}): run \`karpctl doctor --fix\` first, then upgrade`,
  }
}

/** A CRD as far as its stored versions go. */
interface StoredCrd {
  status?: { storedVersions?: string[] }
}

/** Each v1 CRD's status.storedVersions, read fresh (the storage-version migration changes them). */
export async function readStoredVersions(
  kube: Parameters<Resource['observe']>[0]['kube'],
): Promise<Record<string, string[]>> {
  const found = await Promise.all(
    V1_CRDS.map(
      async (name) =>
        [
          name,
          await kube.get<StoredCrd>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`),
        ] as const,
    ),
  )
  return Object.fromEntries(
    found.flatMap(([name, crd]) => (crd ? [[name, crd.status?.storedVersions ?? []]] : [])),
  )
}

/** A precondition as a plan step: it changes nothing; a failing one blocks the plan. */
export function precondition<S>(w: {
  key: string
  name: string
  observe?: Resource<S>['observe']
  judge: (current: S | null) => Judgement
  /** A step of another group that only ever blocks or passes (a stack's role: changed in the stack). */
  group?: string
  kind?: string
  address?: string
}): Resource<S> {
  return {
    address: w.address ?? `precondition.${w.key}`,
    kind: w.kind ?? 'precondition',
    name: w.name,
    group: w.group ?? 'Preconditions',
    dependsOn: [],
    desired: { precondition: w.name },
    permissions: [],
    observe: w.observe ?? (async () => null),
    verdict(cur): Verdict {
      const j = w.judge(cur)
      return j.ok
        ? { action: 'unchanged', changes: [], note: j.note }
        : { action: 'update', changes: [], blocked: j.blocked }
    },
    async apply() {
      // Nothing to do: a precondition only ever blocks.
    },
  }
}

/** The step's verdict with one more note beside it (what the upgrade migrated, what it left). */
export function withNote<S>(r: Resource<S>, extra: string | undefined): Resource<S> {
  if (!extra) return r
  return {
    ...r,
    verdict(cur) {
      const v = r.verdict(cur)
      return { ...v, note: v.note ? `${v.note}; ${extra}` : extra }
    },
  }
}
