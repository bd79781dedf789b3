// A resource another tool made that the running install already uses (the stack's or eksctl's
// controller role): karpctl plans against it by its real name and never writes to it. What it lacks is
// judged by doctor's checks before the plan; a failing one blocks, naming the repair.
import type { Resource } from '../types.js'

export function inUse(w: {
  address: string
  kind: string
  name: string
  group: string
  /** Where it was found, as the plan says it. */
  found: string
  /** Failing checks: each blocks the plan. */
  problems: string[]
  /** The way out when a check fails. */
  repair: string
}): Resource<null> {
  return {
    address: w.address,
    kind: w.kind,
    name: w.name,
    group: w.group,
    dependsOn: [],
    desired: { inUse: w.name },
    permissions: [],
    observe: async () => null,
    verdict: () =>
      w.problems.length
        ? {
            action: 'update',
            changes: [],
            blocked: `${w.problems.join('; ')}: ${w.repair}`,
          }
        : {
            action: 'unchanged',
            changes: [],
            note: `in use (${w.found}): not karpctl's, used as it is and never changed or deleted`,
          },
    apply: async () => {},
  }
}
