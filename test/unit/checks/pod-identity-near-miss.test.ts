// pod-identity without an association for the controller (issue 35, item 4): the fix associates the
// role the message names — the near-miss association's role (made for another namespace, as
// terraform-aws-eks v21 `namespace`/`service_account` inputs allow) — never a role guessed from
// karpctl's convention, and --fix creates that association (README's --fix table).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { podIdentity } from '../../../src/checks/pod-identity.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { fixSet } from '../../../src/fix/fixes.js'
import { podIdentityFacts } from '../../helpers/check-fixtures.js'
import { ACCOUNT, failed, ok } from '../../helpers/facts.js'

const MODULE_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/KarpenterController-20250101000000000000000001`

/** The association the module made for karpenter/karpenter; the chart runs in kube-system. */
const nearMiss = (more?: (f: Facts) => void) =>
  podIdentityFacts((f) => {
    f.eks.podIdentityAssociations = ok([
      {
        associationId: 'a-module',
        namespace: 'karpenter',
        serviceAccount: 'karpenter',
        roleArn: MODULE_ROLE_ARN,
      },
    ])
    f.iam.controllerRoleName = null
    f.iam.controllerIdentity = 'none'
    more?.(f)
  })

test("the near-miss association's role is the one associated, in the printed fix and in --fix", () => {
  const facts = nearMiss()
  const r = runCheck(podIdentity, facts)
  const f = r.findings[0]!
  assert.equal(f.status, 'fail')
  assert.match(f.fix!.commands![0]!, new RegExp(`--role-arn ${MODULE_ROLE_ARN} `))
  assert.ok(!f.fix!.commands!.some((c) => c.includes('KarpenterControllerRole-demo')))
  const fs = fixSet(facts, [r])
  assert.deepEqual(
    fs.resources.map((x) => (x.desired as { roleArn?: string }).roleArn),
    [MODULE_ROLE_ARN],
  )
})

test('no role known anywhere: no command with a guessed role, and --fix writes nothing (item 6)', () => {
  const facts = nearMiss((f) => (f.eks.podIdentityAssociations = ok([])))
  const r = runCheck(podIdentity, facts)
  assert.deepEqual(r.findings[0]!.fix!.commands, [])
  assert.match(r.findings[0]!.fix!.summary, /no controller role is known/)
  assert.deepEqual(fixSet(facts, [r]).resources, [])
})

test('two near-miss associations with different roles: not proven, nothing guessed', () => {
  const facts = nearMiss((f) => {
    if (f.eks.podIdentityAssociations.ok)
      f.eks.podIdentityAssociations.value.push({
        associationId: 'a-2',
        namespace: 'kube-system',
        serviceAccount: 'other',
        roleArn: `arn:aws:iam::${ACCOUNT}:role/Other`,
      })
  })
  assert.deepEqual(runCheck(podIdentity, facts).findings[0]!.fix!.commands, [])
})

test('associations unreadable (moto, an endpoint without Pod Identity): unknown', () => {
  const r = runCheck(
    podIdentity,
    nearMiss(
      (f) =>
        (f.eks.podIdentityAssociations = failed(
          'eks:ListPodIdentityAssociations',
          'NotFound',
          'unsupported',
        )),
    ),
  )
  assert.equal(r.status, 'unknown')
})
