import { KarpctlError } from '../errors.js'
import type { Permission } from '../plan/types.js'

/** Everything the caller may not do, at once, before any change. */
export class PreflightError extends KarpctlError {
  constructor(
    readonly caller: string,
    readonly denied: Permission[],
  ) {
    super(
      `${caller} may not make ${denied.length} change(s) of this plan (IAM's policy simulator): ${denied
        .map((d) => `${d.action} on ${d.resource}`)
        .join(', ')}; grant them (see the README's permissions) and run again — nothing was changed`,
      'ACCESS_DENIED',
    )
  }
}
