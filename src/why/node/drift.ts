// Drift: the NodeClaim's Drifted condition, set by the nodeclaim disruption controller
// (sigs.k8s.io/karpenter pkg/controllers/nodeclaim/disruption/drift.go: NodePoolDrifted when the
// karpenter.sh/nodepool-hash annotations differ at the same hash version, RequirementsDrifted when
// its labels no longer satisfy the NodePool's requirements) and by the provider
// (aws/karpenter-provider-aws pkg/cloudprovider/drift.go: AMIDrift, SubnetDrift, SecurityGroupDrift,
// NodeClassDrift on the ec2nodeclass-hash annotations, CapacityReservationDrift). The disruption
// controller replaces a node whose Drifted condition is True (pkg/controllers/disruption/drift.go).
// What moved is read from both sides here, so the verdict names the field, not only the reason.
import type { EC2NodeClass, NodePool } from '../../facts/types.js'
import { fromSelector, within, type Requirement } from '../requirements.js'
import { holdReason } from './fixes.js'
import type { Step } from './verdict.js'
import {
  condition,
  isTrue,
  NODECLASS_HASH,
  NODECLASS_HASH_VERSION,
  NODEPOOL_HASH,
  NODEPOOL_HASH_VERSION,
  type NodeView,
} from './view.js'
import type { FullNodeClaim } from './types.js'

type Annotated = { metadata: { annotations?: Record<string, string> } }

/** Hash drift as Karpenter computes it: both hashes present, same version, different values. */
function hashMoved(
  obj: Annotated | undefined,
  nc: FullNodeClaim,
  hash: string,
  version: string,
): string | undefined {
  const a = obj?.metadata.annotations ?? {}
  const b = nc.metadata.annotations ?? {}
  if (!a[hash] || !b[hash] || !a[version] || !b[version] || a[version] !== b[version]) return undefined
  return a[hash] === b[hash] ? undefined : `${hash} ${b[hash]} on the NodeClaim, ${a[hash]} on the`
}

/** Whether a label value is one the requirement allows. */
const allows = (r: Requirement, v: string) => r.values.includes(v) !== r.complement && within(r, v)

/** The NodePool requirements the NodeClaim's labels no longer satisfy (areRequirementsDrifted). */
export function requirementsMoved(np: NodePool, nc: FullNodeClaim): string[] {
  const labels = nc.metadata.labels ?? {}
  const out: string[] = []
  for (const r of np.spec.template.spec.requirements ?? []) {
    const req = fromSelector(r)
    if (!req) continue
    const have = labels[r.key]
    // A label the NodeClaim does not carry is compatible unless the requirement needs it to exist.
    const ok = have === undefined ? !['In', 'Exists', 'Gt', 'Lt'].includes(r.operator) : allows(req, have)
    if (!ok)
      out.push(
        `${r.key} ${r.operator} ${(r.values ?? []).join(',')} (the node has ${have === undefined ? 'no such label' : `${r.key}=${have}`})`,
      )
  }
  return out
}

/** What moved on the EC2NodeClass side that can be read from its status (the AMI). */
function amiMoved(nc: FullNodeClaim, cls: EC2NodeClass | undefined): string | undefined {
  const image = nc.status?.imageID
  // status.amis: the AMIs the selector resolves to now (doctor's facts keep the whole status, untyped here).
  const amis = (cls?.status as { amis?: { id: string }[] } | undefined)?.amis
  if (!image || !amis?.length) return undefined
  return amis.some((a) => a.id === image)
    ? undefined
    : `the node runs ${image}; EC2NodeClass ${cls?.metadata.name} status.amis now resolves to ${amis.map((a) => a.id).join(', ')}`
}

const WHAT: Record<string, string> = {
  NodePoolDrifted: 'the NodePool template changed',
  RequirementsDrifted: "the node's labels no longer satisfy the NodePool's requirements",
  AMIDrift: "the EC2NodeClass's AMI selection now resolves to another image",
  SubnetDrift: "the node's subnet is no longer one the EC2NodeClass selects",
  SecurityGroupDrift: "the node's security groups are no longer those the EC2NodeClass selects",
  NodeClassDrift: 'the EC2NodeClass spec changed',
  CapacityReservationDrift: 'the capacity reservation it launched into is no longer selected',
  InstanceTypeNotFound: 'its instance type is no longer offered for the NodePool',
}

/** Each drift the two sides show, computed from the objects (what `--with` changes are judged by). */
export function driftEvidence(v: NodeView): { reason: string; detail: string }[] {
  const nc = v.nodeClaim
  if (!nc) return []
  const out: { reason: string; detail: string }[] = []
  const np = v.nodePool
  const pool = hashMoved(np, nc, NODEPOOL_HASH, NODEPOOL_HASH_VERSION)
  if (pool && np) out.push({ reason: 'NodePoolDrifted', detail: `${pool} NodePool ${np.metadata.name}` })
  const reqs = np ? requirementsMoved(np, nc) : []
  if (reqs.length && np)
    out.push({
      reason: 'RequirementsDrifted',
      detail: `NodePool ${np.metadata.name} spec.template.spec.requirements: ${reqs.join('; ')}`,
    })
  const cls = hashMoved(v.nodeClass, nc, NODECLASS_HASH, NODECLASS_HASH_VERSION)
  if (cls && v.nodeClass)
    out.push({ reason: 'NodeClassDrift', detail: `${cls} EC2NodeClass ${v.nodeClass.metadata.name}` })
  const ami = amiMoved(nc, v.nodeClass)
  if (ami) out.push({ reason: 'AMIDrift', detail: ami })
  return out
}

export function judgeDrift(v: NodeView): Step {
  const nc = v.nodeClaim
  const drifted = condition(nc?.status?.conditions, 'Drifted')
  const evidence = driftEvidence(v)
  const pool = v.nodePool?.metadata.name
  const hold = pool ? holdReason(pool, 'Drifted') : undefined
  if (isTrue(drifted)) {
    const reason = drifted?.reason ?? ''
    const detail = evidence.find((e) => e.reason === reason)?.detail
    return {
      method: 'drift',
      applies: 'yes',
      reason: 'Drifted',
      message: `drifted (NodeClaim ${nc?.metadata.name} status.conditions Drifted=True, reason ${reason || 'not given'}${drifted?.lastTransitionTime ? ` since ${drifted.lastTransitionTime}` : ''}): ${WHAT[reason] ?? drifted?.message ?? 'see the reason'}${detail ? ` — ${detail}` : ''}; Karpenter replaces it`,
      ...(hold ? { fix: hold } : {}),
    }
  }
  if (evidence.length)
    return {
      method: 'drift',
      applies: 'yes',
      reason: 'Drifted',
      message: `will drift (${evidence.map((e) => e.reason).join(', ')}; Karpenter has not marked it yet): ${evidence.map((e) => e.detail).join('; ')}`,
      ...(hold ? { fix: hold } : {}),
    }
  return {
    method: 'drift',
    applies: 'no',
    message:
      'not drifted: NodeClaim has no Drifted=True condition and its NodePool and EC2NodeClass match it',
  }
}
