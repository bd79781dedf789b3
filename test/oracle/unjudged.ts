// The fields of a case that Karpenter's scheduler reads and `why` does not judge (or cannot, from what a
// snapshot holds). Where one is present, `why` may say ? but never ✔: a ✔ there is counted as a false fit
// even when Karpenter happens to launch, because it was not earned.
import type { NodeSelectorRequirement } from '../../src/facts/types.js'
import { UNJUDGED_TYPE_LABELS } from '../../src/why/instance-types.js'
import type { WhyFacts, WorkloadPod } from '../../src/why/types.js'

/**
 * Instance-type labels whose values come from DescribeInstanceTypes fields a snapshot does not keep:
 * the list `why` declares (a ✔ on one is also checked against Karpenter's answer, so a wrong list shows).
 */
export const UNKNOWABLE_LABELS = [...UNJUDGED_TYPE_LABELS]

/** Resources `why` sizes instance types by (the rest are extended resources it does not judge). */
const JUDGED_RESOURCES = new Set([
  'cpu',
  'memory',
  'pods',
  'ephemeral-storage',
  'nvidia.com/gpu',
  'amd.com/gpu',
  'habana.ai/gaudi',
  'aws.amazon.com/neuron',
  'aws.amazon.com/neuroncore',
  'vpc.amazonaws.com/efa',
])

export function unjudgedFields(pod: WorkloadPod, facts: WhyFacts, pool: string): string[] {
  const out: string[] = []
  const spec = pod.spec
  const affinity = spec.affinity as
    Record<string, { requiredDuringSchedulingIgnoredDuringExecution?: unknown[] }> | undefined
  // Judged (pod-affinity.ts): terms in the pod's namespace on the zone or the hostname.
  for (const kind of ['podAffinity', 'podAntiAffinity'])
    for (const t of (affinity?.[kind]?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as {
      topologyKey?: string
      namespaces?: string[]
      namespaceSelector?: unknown
    }[])
      if (
        t.namespaceSelector ||
        (t.namespaces ?? []).some((n) => n !== pod.metadata.namespace) ||
        !['topology.kubernetes.io/zone', 'kubernetes.io/hostname'].includes(t.topologyKey ?? '')
      )
        out.push(`required ${kind} on ${t.topologyKey}`)
  const resources = [...spec.containers, ...(spec.initContainers ?? [])].flatMap((c) =>
    Object.keys({ ...c.resources?.requests, ...c.resources?.limits }),
  )
  for (const r of new Set(resources)) if (!JUDGED_RESOURCES.has(r)) out.push(`resource ${r}`)
  for (const c of spec.topologySpreadConstraints ?? [])
    if (
      c.whenUnsatisfiable === 'DoNotSchedule' &&
      !['topology.kubernetes.io/zone', 'kubernetes.io/hostname'].includes(c.topologyKey)
    )
      out.push(`topology spread on ${c.topologyKey}`)
  const np = facts.kube.nodePools.ok
    ? facts.kube.nodePools.value.find((p) => p.metadata.name === pool)
    : undefined
  const reqs: NodeSelectorRequirement[] = [
    ...(np?.spec.template.spec.requirements ?? []),
    ...(
      spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
    ).flatMap((t) => t.matchExpressions ?? []),
  ]
  const keys = new Set([...reqs.map((r) => r.key), ...Object.keys(spec.nodeSelector ?? {})])
  for (const k of keys) if (UNKNOWABLE_LABELS.includes(k)) out.push(`requirement on ${k}`)
  return out
}
