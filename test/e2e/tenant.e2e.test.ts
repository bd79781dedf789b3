// karpctl tenant add / list / remove on the real bed, after a karpctl install: each tenant gets its own
// node role, PassRole grant, aws-auth mapping, EC2NodeClass and tainted NodePool; removing one waits for
// its nodes to drain and leaves every other tenant's resources exactly as they were. Re-adding states the
// whole desired state: a policy, tag, weight or memory limit no longer asked for is removed.
// On the real Karpenter 1.14.1 controller (`karpenter: true`): it marks each tenant's class and pool
// Ready, launches the node a tenant's pod asks for, and drains and terminates it when the tenant goes.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import {
  AttachRolePolicyCommand,
  DetachRolePolicyCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
  TagRoleCommand,
  UntagRoleCommand,
} from '@aws-sdk/client-iam'
import {
  awsClients,
  karpenterFixtures,
  bareClusterBed,
  runKarpctl,
  targetArgs,
  type Bed,
  type KubeObject,
} from './bed/index.js'
import {
  claimsOf,
  instanceIdOf,
  isTrue,
  instanceById,
  karpenterInstances,
  pendingPod,
  tagOf,
  waitForClaim,
} from './bed/karpenter-objects.js'

const target = (bed: Bed) => targetArgs(bed)
const opts = (bed: Bed) => ({
  env: { NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}` },
  timeoutMs: 300_000,
})
const karpctl = (bed: Bed, args: string[]) => runKarpctl(bed, [...args, ...target(bed)], opts(bed))

async function globexState(bed: Bed) {
  const iam = awsClients(bed).iam
  const role = await iam.send(new GetRoleCommand({ RoleName: 'KarpenterNodeRole-demo-globex' }))
  const pass = await iam.send(
    new GetRolePolicyCommand({
      RoleName: 'KarpenterControllerRole-demo',
      PolicyName: 'KarpctlTenantPassRole-globex',
    }),
  )
  const pick = (o: KubeObject | undefined) => ({ labels: o?.metadata?.labels, spec: o?.spec })
  return {
    role: [role.Role?.Arn, role.Role?.Tags],
    pass: pass.PolicyDocument,
    nodePool: pick(await bed.kube.get('/apis/karpenter.sh/v1/nodepools/globex')),
    nodeClass: pick(await bed.kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/globex')),
    awsAuth: String(
      (await bed.kube.get('/api/v1/namespaces/kube-system/configmaps/aws-auth'))?.data?.mapRoles,
    ).includes('KarpenterNodeRole-demo-globex'),
  }
}

const GLOBEX_ROLE = 'KarpenterNodeRole-demo-globex'
const S3 = 'arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess'
const BY_HAND = 'arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy'

async function globexRole(bed: Bed) {
  const iam = awsClients(bed).iam
  const role = await iam.send(new GetRoleCommand({ RoleName: GLOBEX_ROLE }))
  const attached = await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: GLOBEX_ROLE }))
  return {
    tags: Object.fromEntries((role.Role?.Tags ?? []).map((t) => [t.Key, t.Value])),
    attached: (attached.AttachedPolicies ?? []).map((p) => p.PolicyArn ?? '').sort(),
  }
}

interface PlanChange {
  field: string
  from?: unknown
  to?: unknown
}
type PlanOut = {
  plan: { summary: Record<string, number>; steps: { address: string; changes: PlanChange[] }[] }
}
const changesOf = (out: PlanOut, address: string) =>
  out.plan.steps.find((s) => s.address === address)?.changes ?? []

/**
 * Issue 19 item 4: `tenant add` states the whole desired state. Globex gets a policy, a tag, a weight
 * and a memory limit, then a re-run without them removes exactly those (a policy attached and a tag set
 * by hand stay), and a third run has nothing to change.
 */
async function reAddRemovesWhatIsNoLongerAsked(bed: Bed) {
  const iam = awsClients(bed).iam
  const defaults = (await globexRole(bed)).attached
  assert.ok(!defaults.includes(S3))
  const asked = await karpctl(bed, [
    'tenant',
    'add',
    'globex',
    '--yes',
    '--policy-arn',
    S3,
    '--tag',
    'cost-center=77',
    '--weight',
    '10',
    '--memory-limit',
    '100Gi',
  ])
  assert.equal(asked.code, 0, `${asked.stdout}\n${asked.stderr}`)
  assert.ok((await globexRole(bed)).attached.includes(S3))
  assert.equal((await globexRole(bed)).tags['cost-center'], '77')
  const np = await bed.kube.get('/apis/karpenter.sh/v1/nodepools/globex')
  assert.equal(np?.spec?.weight, 10)
  assert.equal(np?.spec?.limits?.memory, '100Gi')
  // What someone else puts on karpctl's role is theirs: no later tenant add removes it.
  await iam.send(new AttachRolePolicyCommand({ RoleName: GLOBEX_ROLE, PolicyArn: BY_HAND }))
  await iam.send(new TagRoleCommand({ RoleName: GLOBEX_ROLE, Tags: [{ Key: 'team', Value: 'finance' }] }))

  const dry = await karpctl(bed, ['tenant', 'add', 'globex', '--dry-run'])
  assert.equal(dry.code, 0, dry.stderr)
  assert.match(
    dry.stdout,
    /~ update {4}IAM role KarpenterNodeRole-demo-globex\n[^]*attached policy: AmazonS3ReadOnlyAccess → \(removed\)/,
  )
  assert.match(dry.stdout, /tags\.cost-center: 77 → \(removed\)/)
  assert.match(dry.stdout, /~ update {4}NodePool globex\n[^]*spec\.weight: 10 → \(removed\)/)
  assert.match(dry.stdout, /spec\.limits\.memory: 100Gi → \(removed\)/)
  assert.match(dry.stdout, /spec\.tags\.cost-center: 77 → \(removed\)/)

  const bare = await karpctl(bed, ['tenant', 'add', 'globex', '--yes', '--json'])
  assert.equal(bare.code, 0, bare.stderr)
  const out = JSON.parse(bare.stdout) as PlanOut
  const removed = (address: string) =>
    changesOf(out, address)
      .filter((c) => c.to === null)
      .map((c) => [c.field, c.from])
  assert.deepEqual(removed('iam-role.tenant'), [
    ['attached policy', 'AmazonS3ReadOnlyAccess'],
    ['tags.cost-center', '77'],
    ['tags.karpctl.io/asked-policies', 'aws:policy/AmazonS3ReadOnlyAccess'],
    ['tags.karpctl.io/asked-tags', 'cost-center'],
  ])
  assert.deepEqual(removed('kube.nodepool.tenant').sort(), [
    ['spec.limits.memory', '100Gi'],
    ['spec.weight', 10],
  ])
  assert.deepEqual(removed('kube.ec2nodeclass.tenant'), [['spec.tags.cost-center', '77']])

  const role = await globexRole(bed)
  assert.deepEqual(
    role.attached,
    [...defaults, BY_HAND].sort(),
    'S3 detached; the defaults and the hand-attached policy stay',
  )
  assert.equal(role.tags['cost-center'], undefined)
  assert.equal(role.tags.team, 'finance')
  assert.equal(role.tags['karpctl.io/tenant'], 'globex')
  const pool = await bed.kube.get('/apis/karpenter.sh/v1/nodepools/globex')
  assert.equal(pool?.spec?.weight, undefined)
  assert.deepEqual(pool?.spec?.limits, { cpu: '100' })
  const nc = await bed.kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/globex')
  assert.equal(nc?.spec?.tags?.['cost-center'], undefined)

  const third = await karpctl(bed, ['tenant', 'add', 'globex', '--yes', '--json'])
  assert.equal(third.code, 0, third.stderr)
  assert.deepEqual((JSON.parse(third.stdout) as PlanOut).plan.summary, {
    create: 0,
    update: 0,
    unchanged: 5,
    delete: 0,
  })
  // Give the role back as the rest of the test knows it.
  await iam.send(new DetachRolePolicyCommand({ RoleName: GLOBEX_ROLE, PolicyArn: BY_HAND }))
  await iam.send(new UntagRoleCommand({ RoleName: GLOBEX_ROLE, TagKeys: ['team'] }))
}

describe(
  'karpctl tenant on moto, a real apiserver, the real Karpenter chart and controller',
  { timeout: 20 * 60_000 },
  () => {
    test('add two tenants, re-add unchanged, re-add without what was asked before removes it, list, remove one (waiting for its node), the other untouched', async (t) => {
      const { bed } = await bareClusterBed(t, { karpenter: true })
      const inst = await karpctl(bed, [
        'install',
        '--chart-dir',
        join(karpenterFixtures(), 'v1.14.1', 'charts'),
        '--yes',
        '--timeout',
        '60',
      ])
      assert.equal(inst.code, 0, inst.stderr)

      const acme = await karpctl(bed, [
        'tenant',
        'add',
        'acme',
        '--yes',
        '--capacity-types',
        'spot',
        '--tag',
        'cost-center=42',
        '--cpu-limit',
        '64',
        '--policy-arn',
        'arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess',
      ])
      assert.equal(acme.code, 0, `${acme.stdout}\n${acme.stderr}`)
      assert.match(acme.stdout, /\+ create {4}IAM role KarpenterNodeRole-demo-acme/)
      assert.match(acme.stdout, /nodeSelector:\n {4}karpctl.io\/tenant: acme\n {2}tolerations:/)
      assert.match(acme.stdout, /✔ tenant-isolation/)
      const np = await bed.kube.get('/apis/karpenter.sh/v1/nodepools/acme')
      assert.deepEqual(np?.spec?.template?.spec?.taints, [
        { key: 'karpctl.io/tenant', value: 'acme', effect: 'NoSchedule' },
      ])
      assert.deepEqual(np?.spec?.limits, { cpu: '64' })
      const nc = await bed.kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/acme')
      assert.equal(nc?.spec?.role, 'KarpenterNodeRole-demo-acme')
      assert.equal(nc?.spec?.tags?.['cost-center'], '42')

      const globex = await karpctl(bed, ['tenant', 'add', 'globex', '--yes', '--json'])
      assert.equal(globex.code, 0, globex.stderr)
      const again = await karpctl(bed, ['tenant', 'add', 'globex', '--yes', '--json'])
      assert.equal(again.code, 0, again.stderr)
      const plan = JSON.parse(again.stdout) as { plan: { summary: Record<string, number> }; apply?: unknown }
      assert.deepEqual(plan.plan.summary, { create: 0, update: 0, unchanged: 5, delete: 0 })
      assert.equal(plan.apply, undefined, 'nothing applied')
      const changed = await karpctl(bed, ['tenant', 'add', 'globex', '--dry-run', '--cpu-limit', '8'])
      assert.match(changed.stdout, /~ update {4}NodePool globex\n {8}spec\.limits\.cpu: \S+ → 8\n/)
      await reAddRemovesWhatIsNoLongerAsked(bed)

      const list = await karpctl(bed, ['tenant', 'list', '--json'])
      const rows = (
        JSON.parse(list.stdout) as {
          tenants: {
            tenant: string
            capacityTypes: string[]
            limits: Record<string, string>
            role: string
            checks: string
          }[]
        }
      ).tenants
      assert.deepEqual(
        rows.map((r) => [r.tenant, r.capacityTypes, r.limits.cpu, r.role, r.checks]),
        [
          ['acme', ['spot'], '64', 'KarpenterNodeRole-demo-acme', 'pass'],
          ['globex', ['on-demand', 'spot'], '100', 'KarpenterNodeRole-demo-globex', 'pass'],
        ],
      )

      // The whole catalog on the install plus both tenants: clean.
      const doc = await karpctl(bed, ['doctor', '--json'])
      assert.equal(doc.code, 0, doc.stdout.slice(0, 3000))
      const summary = (JSON.parse(doc.stdout) as { summary: Record<string, number> }).summary
      assert.equal(summary.fail, 0)

      const before = await globexState(bed)
      const noTty = await karpctl(bed, ['tenant', 'remove', 'acme'])
      assert.equal(noTty.code, 2)
      assert.match(noTty.stderr, /pass --confirm acme to apply it without a terminal/)
      const wrong = await karpctl(bed, ['tenant', 'remove', 'acme', '--confirm', 'globex'])
      assert.equal(wrong.code, 2)
      assert.match(wrong.stderr, /--confirm globex does not match tenant acme: nothing was removed/)

      // A node of acme's NodePool, launched by Karpenter for a tenant's pod (no do-not-disrupt: the
      // drain must be free to evict it). Removing the tenant deletes the NodePool, whose NodeClaims go
      // with it: Karpenter drains and terminates the node while tenant remove waits.
      await bed.kube.create(
        pendingPod(
          'acme-app',
          { 'karpctl.io/tenant': 'acme' },
          {
            toleration: { key: 'karpctl.io/tenant', operator: 'Equal', value: 'acme', effect: 'NoSchedule' },
          },
        ),
      )
      const claim = await waitForClaim(bed, 'a NodeClaim of NodePool acme, initialised', 'acme', (c) =>
        isTrue(c, 'Initialized'),
      )
      const instanceId = instanceIdOf(claim)
      // no do-not-disrupt here (the drain must be free to evict the pod): Karpenter may have replaced the
      // node by a cheaper one already, so the instance is read by id, in any state (CI of stop 43)
      const launched = await instanceById(bed, instanceId)
      assert.equal(launched && tagOf(launched, 'karpenter.sh/nodepool'), 'acme', `instance ${instanceId}`)
      t.diagnostic(`acme's node: NodeClaim ${claim.metadata.name} → instance ${instanceId}`)
      const rm = await karpctl(bed, ['tenant', 'remove', 'acme', '--confirm', 'acme'])
      assert.equal(rm.code, 0, rm.stderr)
      assert.match(rm.stderr, /NodePool acme: waiting for \d+ NodeClaims and nodes to go/)
      assert.match(rm.stderr, /✔ deleted NodePool acme \([\d.]+ s\)/)
      assert.match(rm.stdout, /Tenant acme removed \(5 step\(s\)\)/)
      await assert.rejects(
        awsClients(bed).iam.send(new GetRoleCommand({ RoleName: 'KarpenterNodeRole-demo-acme' })),
        /NoSuchEntity|cannot be found/,
      )
      const left = await awsClients(bed).iam.send(
        new ListRolePoliciesCommand({ RoleName: 'KarpenterControllerRole-demo' }),
      )
      assert.ok(!left.PolicyNames?.includes('KarpctlTenantPassRole-acme'))
      assert.ok(left.PolicyNames?.includes('KarpctlTenantPassRole-globex'))
      assert.deepEqual(await globexState(bed), before, "globex's resources are exactly as they were")
      assert.equal(await bed.kube.get('/apis/karpenter.sh/v1/nodepools/acme'), undefined)
      assert.deepEqual(await claimsOf(bed, 'acme'), [], "Karpenter deleted acme's NodeClaim")
      // every instance of acme's NodePool, the one read above and any replacement Karpenter made
      const leftOfAcme = (await karpenterInstances(bed)).filter(
        (i) => tagOf(i, 'karpenter.sh/nodepool') === 'acme',
      )
      assert.deepEqual(
        leftOfAcme.map((i) => i.InstanceId),
        [],
        `instance ${instanceId} (and any replacement) terminated by Karpenter`,
      )
      assert.equal(await bed.kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/acme'), undefined)
      const auth = await bed.kube.get('/api/v1/namespaces/kube-system/configmaps/aws-auth')
      assert.ok(!String(auth?.data?.mapRoles).includes('demo-acme'), 'no acme mapping left')
      assert.ok(!String(auth?.metadata?.annotations?.['karpctl.io/added-map-roles']).includes('demo-acme'))

      const rerun = await karpctl(bed, ['tenant', 'remove', 'acme', '--confirm', 'acme'])
      assert.equal(rerun.code, 0)
      assert.match(rerun.stdout, /Nothing left of tenant acme/)
      const bad = await karpctl(bed, ['tenant', 'add', 'Acme_Corp', '--yes'])
      assert.equal(bad.code, 2)
      assert.match(bad.stderr, /^Error: "Acme_Corp" is not a valid tenant name: lower-case letters/)
    })
  },
)
