// Expiration: the NodeClaim's spec.expireAfter counted from its creation; at that time the
// expiration controller deletes it — forcefully, without budgets or do-not-disrupt (v1 semantics;
// sigs.k8s.io/karpenter pkg/controllers/nodeclaim/expiration/controller.go).
import { jsonPatchNodePool } from './fixes.js'
import { parseDuration, when } from './duration.js'
import type { Step } from './verdict.js'
import type { NodeView } from './view.js'

export function judgeExpiration(v: NodeView, now: number): Step {
  const nc = v.nodeClaim
  const text = nc?.spec.expireAfter
  const ms = parseDuration(text)
  const pool = v.nodePool?.metadata.name
  if (!nc || ms === null)
    return {
      method: 'expiration',
      applies: 'no',
      message: nc
        ? 'NodeClaim spec.expireAfter is Never: it does not expire'
        : 'no NodeClaim: nothing expires it',
    }
  const born = Date.parse(nc.metadata.creationTimestamp ?? '')
  if (ms === undefined || Number.isNaN(born))
    return {
      method: 'expiration',
      applies: 'maybe',
      message: `cannot tell when it expires (expireAfter ${JSON.stringify(text)}, created ${nc.metadata.creationTimestamp ?? 'at an unknown time'})`,
    }
  const at = born + ms
  const fix = pool
    ? {
        summary: `new nodes of NodePool ${pool} take spec.template.spec.expireAfter; this NodeClaim keeps its own (spec.expireAfter ${text}): to keep nodes longer raise it on the NodePool`,
        commands: [
          jsonPatchNodePool(pool, [
            { op: 'replace', path: '/spec/template/spec/expireAfter', value: 'Never' },
          ]),
        ],
      }
    : undefined
  return {
    method: 'expiration',
    applies: at <= now ? 'yes' : 'later',
    at: when(at, now),
    message:
      at <= now
        ? `expired at ${when(at, now)} (NodeClaim ${nc.metadata.name} spec.expireAfter ${text}): Karpenter deletes it without budgets or do-not-disrupt`
        : `expires at ${when(at, now)} (NodeClaim ${nc.metadata.name} spec.expireAfter ${text}, from its creation); then Karpenter deletes it without budgets or do-not-disrupt`,
    ...(fix ? { fix } : {}),
  }
}
