// Actions a getting-started template still grants after Karpenter stopped calling them: the template
// lags the code, so a role without them is not short of anything the installed controller does. Kept
// as data beside the reference templates (reference-policy.ts), each with where the call was dropped.
import { cmpVersion, parseVersion } from './version.js'

export interface RetiredAction {
  action: string
  /** The first version that no longer calls it (every later one neither). */
  notCalledFrom: string
  /** Where the call and then the permission were dropped. */
  sources: string[]
}

export const RETIRED_ACTIONS: readonly RetiredAction[] = [
  {
    // Zones come from the instance-type offerings since #5308 (before v1.0); the v1.0 template still
    // lists the permission, #6932 dropped it from the v1.1 template.
    action: 'ec2:DescribeAvailabilityZones',
    notCalledFrom: '1.0.0',
    sources: ['aws/karpenter-provider-aws#5308', 'aws/karpenter-provider-aws#6932'],
  },
]

/**
 * Whether `version` of the controller is known not to call `action` although its template grants it;
 * false for an unreadable version (then the template decides).
 */
export function retiredIn(action: string, version: string | undefined): RetiredAction | undefined {
  const v = parseVersion(version)
  if (!v) return undefined
  return RETIRED_ACTIONS.find(
    (r) =>
      r.action.toLowerCase() === action.toLowerCase() && cmpVersion(v, parseVersion(r.notCalledFrom)!) >= 0,
  )
}
