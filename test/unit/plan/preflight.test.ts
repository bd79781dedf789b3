import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Aws } from '../../../src/context/aws.js'
import { KarpctlError } from '../../../src/errors.js'
import { preflight, PreflightError, simulationArn } from '../../../src/plan/preflight.js'
import type { Action, Permission, Plan } from '../../../src/plan/types.js'
import { awsError, fakeResource } from '../../helpers/fake-resource.js'

test('simulationArn: an assumed-role session is its role, root is not simulated, anything else is itself', () => {
  assert.equal(
    simulationArn('arn:aws:sts::123456789012:assumed-role/Admin/me'),
    'arn:aws:iam::123456789012:role/Admin',
  )
  // Kills: the regex's anchors.
  assert.equal(
    simulationArn('x arn:aws:sts::123456789012:assumed-role/Admin/me'),
    'x arn:aws:sts::123456789012:assumed-role/Admin/me',
  )
  assert.equal(simulationArn('arn:aws:iam::123456789012:root'), null)
  assert.equal(simulationArn('arn:aws:iam::123456789012:root-user'), 'arn:aws:iam::123456789012:root-user')
  assert.equal(simulationArn('arn:aws:iam::123456789012:user/bob'), 'arn:aws:iam::123456789012:user/bob')
})

const plan = (...steps: [Action, Permission[]][]): Plan => ({
  title: 't',
  steps: steps.map(([action, permissions], i) => ({
    resource: fakeResource(`r${i}`, [], { permissions }),
    verdict: { action, changes: [] },
    current: null,
  })),
})

function simulator(answer: (input: Record<string, unknown>) => unknown) {
  const inputs: Record<string, unknown>[] = []
  const aws = {
    call: async (service: string, op: string, input: Record<string, unknown>) => {
      inputs.push({ service, op, ...input })
      return answer(input)
    },
  } as unknown as Aws
  return { aws, inputs }
}

const USER = 'arn:aws:iam::123456789012:user/bob'

test('preflight: root and plans without changing permissions are not simulated', async () => {
  const s = simulator(() => assert.fail('no simulation'))
  const p = plan(['create', [{ action: 'iam:CreateRole', resource: 'r' }]])
  assert.deepEqual(await preflight(s.aws, p, 'arn:aws:iam::123456789012:root'), { status: 'ok', checked: 0 })
  assert.deepEqual(await preflight(s.aws, plan(['create', []]), USER), { status: 'ok', checked: 0 })
  assert.deepEqual(
    await preflight(s.aws, plan(['unchanged', [{ action: 'iam:CreateRole', resource: 'r' }]]), USER),
    { status: 'ok', checked: 0 },
  )
  assert.deepEqual(s.inputs, [])
})

test('preflight: one simulation per resource with its sorted actions; denials listed with fallbacks', async () => {
  const s = simulator((input) =>
    input.ResourceArns && (input.ResourceArns as string[])[0] === 'arn:a'
      ? {
          EvaluationResults: [
            { EvalActionName: 'iam:B', EvalResourceName: 'arn:a', EvalDecision: 'allowed' },
            { EvalDecision: 'implicitDeny' },
          ],
        }
      : {},
  )
  const p = plan(
    [
      'create',
      [
        { action: 'iam:B', resource: 'arn:a' },
        { action: 'iam:A', resource: 'arn:a' },
      ],
    ],
    ['update', [{ action: 'sqs:C', resource: 'arn:b' }]],
    ['unchanged', [{ action: 'iam:Z', resource: 'arn:c' }]],
  )
  assert.deepEqual(await preflight(s.aws, p, USER), {
    status: 'denied',
    denied: [{ action: '?', resource: '*' }],
    checked: 2,
  })
  assert.deepEqual(s.inputs, [
    {
      service: 'iam',
      op: 'SimulatePrincipalPolicy',
      PolicySourceArn: USER,
      ActionNames: ['iam:A', 'iam:B'],
      ResourceArns: ['arn:a'],
    },
    {
      service: 'iam',
      op: 'SimulatePrincipalPolicy',
      PolicySourceArn: USER,
      ActionNames: ['sqs:C'],
      ResourceArns: ['arn:b'],
    },
  ])
  const allowed = simulator(() => ({
    EvaluationResults: [{ EvalActionName: 'sqs:C', EvalDecision: 'allowed' }],
  }))
  assert.deepEqual(
    await preflight(allowed.aws, plan(['create', [{ action: 'sqs:C', resource: 'arn:b' }]]), USER),
    {
      status: 'ok',
      checked: 1,
    },
  )
})

test('preflight: a simulator that cannot answer is unavailable with its reason; a KarpctlError stops the run', async () => {
  const p = plan(['create', [{ action: 'iam:A', resource: 'arn:a' }]])
  const denied = simulator(() => {
    throw awsError('AccessDenied', 'not allowed to simulate', 403)
  })
  const r = await preflight(denied.aws, p, USER)
  assert.equal(r.status, 'unavailable')
  assert.match((r as { reason: string }).reason, /^AccessDenied: .*not allowed to simulate/)
  const fatal = new KarpctlError('stop', 'STOP')
  const stopping = simulator(() => {
    throw fatal
  })
  await assert.rejects(preflight(stopping.aws, p, USER), (e) => e === fatal)
})

test('PreflightError: every denial in one line, with the way out', () => {
  const e = new PreflightError('arn:x', [
    { action: 'iam:A', resource: 'arn:a' },
    { action: 'sqs:C', resource: 'arn:b' },
  ])
  assert.equal(
    e.message,
    "arn:x may not make 2 change(s) of this plan (IAM's policy simulator): iam:A on arn:a, sqs:C on arn:b; grant them (see the README's permissions) and run again — nothing was changed",
  )
  assert.equal(e.code, 'ACCESS_DENIED')
})
