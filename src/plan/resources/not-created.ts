// The one verdict for a resource karpctl did not create (src/desired/ownership.ts): another tool's that
// already is what karpctl needs is used as it is; one that needs a change blocks without --adopt; an
// adopted one gets only the changes karpctl can record and give back.
import { USED_AS_IT_IS, type OwnershipState } from '../../desired/ownership.js'
import type { FieldChange, Verdict } from '../types.js'

export function notCreatedVerdict(o: {
  state: Exclude<OwnershipState, 'created'>
  /** What adopting it would change (empty: nothing to do). */
  changes: FieldChange[]
  adopt: boolean
  /** Why it blocks without --adopt, with the way out. */
  notOurs: string
  /** A reason even --adopt cannot help (a change that could not be given back). */
  refuse?: string
  /** Said beside an adopted resource's step. */
  adoptedNote: string
}): Verdict {
  if (o.state === 'foreign' && o.changes.length === 0)
    return { action: 'unchanged', changes: [], note: USED_AS_IT_IS }
  if (o.state === 'foreign' && !o.adopt) return { action: 'update', changes: [], blocked: o.notOurs }
  if (o.refuse) return { action: 'update', changes: [], blocked: o.refuse }
  return { action: o.changes.length ? 'update' : 'unchanged', changes: o.changes, note: o.adoptedNote }
}
