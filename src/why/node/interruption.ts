// Interruption: the provider's interruption controller deletes a NodeClaim as soon as an EC2 event
// for its instance arrives on the queue (spot interruption, scheduled change, stopping/terminating),
// before the disruption controller's methods and outside budgets
// (aws/karpenter-provider-aws pkg/controllers/interruption/controller.go, events.go). What is left to
// read is the event it publishes on the Node and NodeClaim.
import type { Step } from './verdict.js'
import type { NodeView } from './view.js'

/** The reasons the interruption controller publishes (aws/karpenter-provider-aws pkg/controllers/interruption/events). */
export const INTERRUPTION_EVENTS = new Set([
  'SpotInterrupted',
  'SpotRebalanceRecommendation',
  'InstanceStopping',
  'InstanceTerminating',
  'InstanceUnhealthy',
  'TerminatingOnInterruption',
  'NodeTerminatingOnInterruption',
  'CapacityReservationInterrupted',
])

/** Rebalance recommendations are only published; every other message makes Karpenter delete the NodeClaim. */
const INFORMATIONAL = new Set(['SpotRebalanceRecommendation'])

export function judgeInterruption(v: NodeView): Step {
  const e = v.events.find((x) => INTERRUPTION_EVENTS.has(x.reason ?? ''))
  if (!e)
    return {
      method: 'interruption',
      applies: 'no',
      message: 'no interruption event from EC2 was published for it',
    }
  const info = INFORMATIONAL.has(e.reason ?? '')
  return {
    method: 'interruption',
    applies: info ? 'no' : 'yes',
    message: `${e.reason}: ${e.message ?? ''}${info ? ' (a recommendation only: Karpenter does not act on it)' : ' — Karpenter deletes the NodeClaim without waiting for budgets'}`,
  }
}
