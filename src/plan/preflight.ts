// Before any change: may the caller do everything the plan does? IAM's policy simulator answers for
// each action on each resource, and every denial is listed at once, so an install never stops half-way
// on AccessDenied. Where the simulator cannot answer, the preflight says so and the install goes on.
import type * as iam from '@aws-sdk/client-iam'
import type { Aws } from '../context/aws.js'
import { KarpctlError } from '../errors.js'
import { failureOf } from '../facts/read.js'
import { changing, type Permission, type Plan } from './types.js'

export type Preflight =
  | { status: 'ok'; checked: number }
  | { status: 'denied'; denied: Permission[]; checked: number }
  | { status: 'unavailable'; reason: string }

/** The principal to simulate: an assumed-role session is simulated as its role. */
export function simulationArn(callerArn: string): string | null {
  const m = /^arn:([\w-]+):sts::(\d{12}):assumed-role\/([^/]+)\/.+$/.exec(callerArn)
  if (m) return `arn:${m[1]}:iam::${m[2]}:role/${m[3]}`
  if (/:root$/.test(callerArn)) return null
  return callerArn
}

export async function preflight(aws: Aws, plan: Plan, callerArn: string): Promise<Preflight> {
  const principal = simulationArn(callerArn)
  if (!principal) return { status: 'ok', checked: 0 }
  const byResource = new Map<string, Set<string>>()
  for (const s of plan.steps.filter(changing))
    for (const p of s.resource.permissions)
      byResource.set(p.resource, (byResource.get(p.resource) ?? new Set()).add(p.action))
  if (byResource.size === 0) return { status: 'ok', checked: 0 }
  try {
    const results = await Promise.all(
      [...byResource].map(([resource, actions]) =>
        aws.call<iam.SimulatePrincipalPolicyCommandOutput>('iam', 'SimulatePrincipalPolicy', {
          PolicySourceArn: principal,
          ActionNames: [...actions].sort(),
          ResourceArns: [resource],
        }),
      ),
    )
    const denied: Permission[] = []
    let checked = 0
    for (const r of results)
      for (const e of r.EvaluationResults ?? []) {
        checked++
        if (e.EvalDecision !== 'allowed')
          denied.push({ action: e.EvalActionName ?? '?', resource: e.EvalResourceName ?? '*' })
      }
    return denied.length ? { status: 'denied', denied, checked } : { status: 'ok', checked }
  } catch (err) {
    if (err instanceof KarpctlError) throw err
    const f = failureOf(err, 'iam:SimulatePrincipalPolicy')
    return { status: 'unavailable', reason: `${f.code}: ${f.message}` }
  }
}

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
