// Why a node went (or is going): the reason in one line, from what Karpenter published about it —
// its disruption event (DisruptionTerminating "Disrupting Node: Drifted"), an interruption event,
// the launch and registration timeouts, expiration — and from what is left on the objects
// (deletionTimestamp, the karpenter.sh/disrupted taint, the Drifted condition). The events reasons are
// sigs.k8s.io/karpenter pkg/events/reason.go and aws/karpenter-provider-aws interruption/events.
import { stamp } from '../ignored.js'
import type { KubeEvent } from '../types.js'
import { INTERRUPTION_EVENTS } from './interruption.js'
import type { FullNodeClaim, KarpenterNode } from './types.js'
import { condition, isTrue } from './view.js'

const at = (e: KubeEvent) => (stamp(e) ? ` at ${stamp(e)}` : '')

/** The line, or undefined when nothing says why (the events may have expired: the API server keeps them an hour). */
export function whyItWent(events: KubeEvent[], nc?: FullNodeClaim, node?: KarpenterNode): string | undefined {
  const disrupting = events.find((e) => e.reason === 'DisruptionTerminating')
  const interrupted = events.find(
    (e) => INTERRUPTION_EVENTS.has(e.reason ?? '') && e.reason !== 'SpotRebalanceRecommendation',
  )
  const grace = events.find((e) => e.reason === 'TerminationGracePeriodExpiring')
  const draining = events.find((e) => e.reason === 'FailedDraining')
  const parts: string[] = []
  if (interrupted)
    parts.push(`interrupted: ${interrupted.reason} (${interrupted.message ?? ''})${at(interrupted)}`)
  else if (disrupting) {
    const reason =
      /Disrupting (?:Node|NodeClaim): (\w+)/.exec(disrupting.message ?? '')?.[1] ?? disrupting.message
    const drifted = condition(nc?.status?.conditions, 'Drifted')
    const trigger =
      reason === 'Drifted' && isTrue(drifted)
        ? ` (${drifted?.reason ?? 'drift'}: ${drifted?.message ?? ''})`
        : ''
    parts.push(
      `disrupted by Karpenter for ${reason}${trigger}${at(disrupting)}: a disruption budget let it through`,
    )
  }
  const launched = condition(nc?.status?.conditions, 'Launched')
  const registered = condition(nc?.status?.conditions, 'Registered')
  if (!parts.length && nc?.metadata.deletionTimestamp) {
    const expire = nc.spec.expireAfter
    const born = Date.parse(nc.metadata.creationTimestamp ?? '')
    const deleted = Date.parse(nc.metadata.deletionTimestamp)
    if (launched && !isTrue(launched))
      parts.push(
        `its launch failed (${launched.reason ?? ''}: ${launched.message ?? ''}) and the 5m launch timeout deleted it`,
      )
    else if (isTrue(launched) && !isTrue(registered))
      parts.push('its node never registered: the 15m registration timeout deleted it')
    else if (expire && expire !== 'Never' && !Number.isNaN(born) && !Number.isNaN(deleted))
      parts.push(
        `deleted at ${nc.metadata.deletionTimestamp}; it was created ${nc.metadata.creationTimestamp} with expireAfter ${expire} (expiration, if the two meet; no event is published for it)`,
      )
    else
      parts.push(
        `deleted at ${nc.metadata.deletionTimestamp} by someone or something other than a Karpenter disruption (no disruption event): check \`kubectl get events\` and the audit log`,
      )
  }
  if (!parts.length && node?.metadata.deletionTimestamp)
    parts.push(`node deleted at ${node.metadata.deletionTimestamp}`)
  if (!parts.length) return undefined
  if (grace) parts.push(`terminationGracePeriod: ${grace.message ?? ''}`)
  if (draining) parts.push(`draining: ${draining.message ?? ''}`)
  return parts.join('; ')
}
