// Upgrade on karpctl's own controller role, write by write: the plan's IAM writes are replayed over a
// simulated role, and after EVERY single write the role's effective permissions (src/iam's evaluator)
// are checked against what both versions' controllers need (their reference templates, src/spec/):
// a need met before the upgrade stays met, the new version's are all met before the chart step, the
// old one's until the controller is replaced (issue 33: a delete before the last puts left the running
// 1.0.14 controller without 11 actions). Every write is also made to fail in turn: no delete comes
// before every put, and the re-run converges to the same role, with no gap either.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import type { EvaluationRequest } from '../../../src/policy/evaluate.js'
import { describeRequest, needsOf, unmet } from '../../../src/iam/needs.js'
import type { ApplyEnv, Resource } from '../../../src/plan/types.js'
import { ownershipTags } from '../../../src/desired/ownership.js'
import {
  NEWEST_REFERENCE,
  REFERENCE_VERSION_LIST,
  referencePolicies,
} from '../../../src/desired/reference-policy.js'
import { controllerIamStep } from '../../../src/upgrade/iam.js'
import { controllerRole, setChartVersion } from '../../helpers/check-fixtures.js'
import { ACCOUNT, healthyFacts, NODE_ROLE_ARN, ok, QUEUE_ARN } from '../../helpers/facts.js'

const PARAMS = {
  partition: 'aws',
  region: 'us-west-2',
  accountId: ACCOUNT,
  clusterName: 'demo',
  nodeRoleArns: [NODE_ROLE_ARN],
  queueArn: QUEUE_ARN,
}
const TENANT = {
  name: 'karpctl-tenant-a-passrole',
  document: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow' as const,
        Action: 'iam:PassRole',
        Resource: `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo-a`,
      },
    ],
  },
}
const INLINE_LIMIT = 10240
type Role = Map<string, PolicyDocument>

const template = (v: string) => referencePolicies(v, PARAMS).map((p) => p.document)
const needs = (v: string) => needsOf(template(v), ACCOUNT)

/** karpctl's install of `version`: its template inline, a tenant's policy beside it. */
function factsOf(version: string, role: Role): Facts {
  return healthyFacts((f) => {
    controllerRole.role(f).role.tags = ownershipTags('demo')
    controllerRole.role(f).attached = ok([])
    controllerRole.role(f).inline = ok([...role].map(([name, document]) => ({ name, document })))
    setChartVersion(version)(f)
  })
}

const installed = (version: string): Role =>
  new Map([
    ...referencePolicies(version, PARAMS).map((p) => [p.name, p.document] as const),
    [TENANT.name, TENANT.document],
  ])

interface Replay {
  writes: string[]
  /** Throws at write number `failAt` (1-based), as IAM would answer it. */
  failAt?: number
}

/**
 * Applies a step over `role` (mutated), checking after each write that no need met before is lost and
 * the inline budget holds. `watched`: the needs that must never go from met to unmet.
 */
async function replay(
  step: Resource,
  role: Role,
  watched: EvaluationRequest[],
  r: Replay,
  observed?: unknown,
): Promise<void> {
  const met = (docs: PolicyDocument[]) => watched.filter((q) => !unmet(docs, [q]).length)
  let before = met([...role.values()])
  const aws = {
    write: async (_svc: string, op: string, i: { PolicyName: string; PolicyDocument?: string }) => {
      if (r.writes.length + 1 === r.failAt)
        throw Object.assign(new Error('injected'), { name: 'ServiceFailure' })
      r.writes.push(`${op} ${i.PolicyName}`)
      if (op === 'DeleteRolePolicy') role.delete(i.PolicyName)
      else role.set(i.PolicyName, JSON.parse(i.PolicyDocument as string) as PolicyDocument)
      const total = [...role.values()].reduce((n, d) => n + JSON.stringify(d).length, 0)
      assert.ok(total <= INLINE_LIMIT, `${total} characters after ${op} ${i.PolicyName}`)
      const now = met([...role.values()])
      const lost = before.filter((q) => !now.includes(q))
      assert.deepEqual(
        lost.map(describeRequest),
        [],
        `lost after write ${r.writes.length}: ${op} ${i.PolicyName}`,
      )
      before = now
    },
  }
  const cur = observed ?? {
    role: controllerRole.role(factsOf('1.0.14', role)).role,
    attached: [],
    inline: Object.fromEntries(role),
  }
  if (step.verdict(cur).action === 'unchanged') return
  await step.apply({ aws } as unknown as ApplyEnv, cur)
}

/** The upgrade's IAM writes from `from` to `to`, then the carry's removal (after the controller step). */
async function upgrade(from: string, to: string, role: Role, r: Replay): Promise<void> {
  const step = controllerIamStep(factsOf(from, role), from, to)
  const watched = [...needs(from), ...needs(to), ...needsOf([TENANT.document], ACCOUNT)]
  await replay(step.resource, role, watched, r)
  // Before the new controller starts: every need of the target met, and every one of the running version.
  assert.deepEqual(
    unmet([...role.values()], needs(to)).map(describeRequest),
    [],
    `${from} → ${to}: the target's`,
  )
  assert.deepEqual(
    unmet([...role.values()], needs(from)).map(describeRequest),
    [],
    `${from} → ${to}: the running version's`,
  )
  // The controller replaced: the carry goes; only the new version's needs are watched now.
  for (const after of step.after?.('helm.karpenter') ?? []) {
    const observed = { roleExists: true, document: role.get('KarpctlUpgradeCarry-demo') ?? null }
    if (after.verdict(observed).action !== 'delete') continue
    await replay(after, role, [...needs(to), ...needsOf([TENANT.document], ACCOUNT)], r, observed)
  }
}

const minors = REFERENCE_VERSION_LIST.filter((v) => v !== NEWEST_REFERENCE)

for (const from of minors) {
  test(`${from} → ${NEWEST_REFERENCE} on karpctl's role: after every write both controllers keep every grant they need`, async () => {
    const role = installed(from)
    const r: Replay = { writes: [] }
    await upgrade(from, NEWEST_REFERENCE, role, r)
    // The end state: the target's policies and the tenant's, nothing else.
    assert.deepEqual(
      [...role.keys()].sort(),
      [...referencePolicies(NEWEST_REFERENCE, PARAMS).map((p) => p.name), TENANT.name].sort(),
    )
    for (const p of referencePolicies(NEWEST_REFERENCE, PARAMS))
      assert.deepEqual(role.get(p.name), p.document)
    assert.deepEqual(role.get(TENANT.name), TENANT.document)
    // Deletes last: none before the last put of the IAM step.
    const iam = r.writes.filter((w) => !w.endsWith('KarpctlUpgradeCarry-demo') || w.startsWith('Put'))
    const lastPut = iam.findLastIndex((w) => w.startsWith('Put'))
    const firstDelete = iam.findIndex((w) => w.startsWith('Delete'))
    assert.ok(firstDelete === -1 || firstDelete > lastPut, iam.join('\n'))
    // Again: nothing to write.
    const again: Replay = { writes: [] }
    await upgrade(NEWEST_REFERENCE, NEWEST_REFERENCE, role, again)
    assert.deepEqual(again.writes, [])
  })
}

test('1.0.14 → 1.14.1, a fault at every write in turn: no gap at the fault, and the re-run converges with none', async () => {
  const clean: Replay = { writes: [] }
  const end = installed('1.0.14')
  await upgrade('1.0.14', '1.14.1', end, clean)
  assert.ok(clean.writes.length >= 9, clean.writes.join('\n'))
  for (let k = 1; k <= clean.writes.length; k++) {
    const role = installed('1.0.14')
    const r: Replay = { writes: [], failAt: k }
    await assert.rejects(upgrade('1.0.14', '1.14.1', role, r), /injected/)
    assert.equal(r.writes.length, k - 1)
    if (r.writes.some((w) => w.startsWith('Delete')))
      assert.ok(
        !clean.writes.slice(k - 1).some((w) => w.startsWith('PutRolePolicy') && !w.endsWith('Carry-demo')),
        `a delete came before a put: fault at ${k}: ${r.writes.join(', ')}`,
      )
    // The same command again, from the role as the fault left it (the planned version is still 1.0.14).
    await upgrade('1.0.14', '1.14.1', role, { writes: [] })
    assert.deepEqual(new Map([...role].sort()), new Map([...end].sort()), `fault at write ${k}`)
  }
})
