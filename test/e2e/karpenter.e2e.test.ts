// karpctl judged by Karpenter itself: the bed runs the real controller (aws/karpenter-provider-aws
// v1.14.1 cmd/controller, built by build.sh) and the real kube-scheduler; it plays only the kubelet
// (bed/kubelet.ts). Nothing here writes a NodeClaim, a condition or an event: every one asserted on
// was written by Karpenter, every instance launched by it through moto's CreateFleet.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { DescribeLaunchTemplatesCommand } from '@aws-sdk/client-ec2'
import { GetInstanceProfileCommand, ListInstanceProfilesCommand } from '@aws-sdk/client-iam'
import {
  awsClients,
  expireRegistration,
  installOn,
  KARPENTER_VERSION,
  karpctlOn,
  seedBareCluster,
  shown,
  startBed,
  teardownOn,
  waitFor,
  type BareCluster,
  type Bed,
  type KubeObject,
} from './bed/index.js'
import {
  conditionOf,
  controllerLog,
  instanceIdOf,
  isTrue,
  karpenterInstances,
  NODECLAIMS,
  pendingPod,
  waitForClaim,
  putSpotInterruption,
  tagOf,
  unresolved,
} from './bed/karpenter-objects.js'

/** What Karpenter made in moto for the cluster: live instances, launch templates, instance profiles. */
async function karpenterMade(bed: Bed) {
  const aws = awsClients(bed)
  const lts = await aws.ec2.send(
    new DescribeLaunchTemplatesCommand({
      Filters: [{ Name: 'tag-key', Values: ['karpenter.k8s.aws/cluster'] }],
    }),
  )
  const profiles = (await aws.iam.send(new ListInstanceProfilesCommand({}))).InstanceProfiles ?? []
  return {
    instances: (await karpenterInstances(bed)).map((i) => i.InstanceId!),
    launchTemplates: (lts.LaunchTemplates ?? []).map((l) => l.LaunchTemplateName!),
    profiles: profiles.filter((p) => p.Path?.startsWith('/karpenter/')).map((p) => p.InstanceProfileName!),
  }
}

/** The Initialized NodeClaim whose node the real scheduler bound a new pod `name` (default pool) to. */
async function claimForPod(bed: Bed, name: string): Promise<KubeObject> {
  await bed.kube.create(pendingPod(name, { 'karpenter.sh/nodepool': 'default' }))
  let node = ''
  await waitFor(
    `pod ${name} bound to a node Karpenter launched`,
    async () =>
      !!(node = (await bed.kube.get(`/api/v1/namespaces/default/pods/${name}`))?.spec?.nodeName ?? ''),
    { timeoutMs: 120_000, intervalMs: 500, proc: bed.procs.karpenter },
  )
  // The scheduler binds as soon as the Node has no taint the pod does not tolerate; Karpenter's
  // initialization controller marks the claim a moment later.
  let claim: KubeObject | undefined
  await waitFor(
    `NodeClaim ${node} Initialized`,
    async () => !!(claim = await bed.kube.get(`${NODECLAIMS}/${node}`)) && isTrue(claim, 'Initialized'),
    { timeoutMs: 60_000, intervalMs: 500, proc: bed.procs.karpenter },
  ).catch((e: Error) => {
    throw new Error(`${e.message}: ${JSON.stringify(claim?.status?.conditions)}`)
  })
  return claim!
}

async function claimGone(bed: Bed, claim: KubeObject, why: string): Promise<void> {
  await waitFor(
    `NodeClaim ${claim.metadata.name} deleted by Karpenter ${why}`,
    async () => {
      const c = await bed.kube.get(`${NODECLAIMS}/${claim.metadata.name}`)
      return !c || c.metadata.uid !== claim.metadata.uid
    },
    { timeoutMs: 90_000, intervalMs: 500, proc: bed.procs.karpenter },
  )
}

describe(`on the real Karpenter controller v${KARPENTER_VERSION}`, { timeout: 1_800_000 }, () => {
  let bed: Bed
  let seed: BareCluster

  before(async () => {
    bed = await startBed({ karpenter: true })
    // The patched moto reports accessConfig as EKS does (since stop 41), and moto implements no
    // access-entry API: install maps the node role in aws-auth on a CONFIG_MAP cluster, as the
    // install matrix's karpctl row does.
    seed = await seedBareCluster(bed, { authenticationMode: 'CONFIG_MAP' })
  })
  after(async () => bed?.stop())

  test('install: Karpenter itself resolves the EC2NodeClass (subnets, security groups, AMIs, instance profile) and marks it Ready', async (t) => {
    const r = await installOn(bed, ['--yes', '--json'])
    assert.equal(r.code, 0, shown(r))
    await bed.karpenter!.controller.ready()
    t.diagnostic(`controller log: ${bed.procs.karpenter?.logPath}`)
    let nc: KubeObject | undefined
    await waitFor(
      'EC2NodeClass default Ready (by Karpenter)',
      async () =>
        isTrue((nc = await bed.kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default')), 'Ready'),
      { timeoutMs: 60_000, intervalMs: 500 },
    )
    assert.deepEqual(unresolved(nc), [])
    assert.deepEqual(
      (nc!.status.subnets as KubeObject[]).map((s) => s.id).sort(),
      [...seed.net.subnetIds].sort(),
      'the discovery-tagged subnets install tagged',
    )
    // moto's own AL2023 images, reached through the EKS-optimized SSM parameters the bed adds
    const amis = (nc!.status.amis as KubeObject[]).map((a) => a.id as string)
    assert.ok(amis.length >= 2, JSON.stringify(nc!.status.amis))
    const profile = String(nc!.status.instanceProfile)
    const ip = await awsClients(bed).iam.send(new GetInstanceProfileCommand({ InstanceProfileName: profile }))
    assert.deepEqual(
      ip.InstanceProfile?.Roles?.map((x) => x.RoleName),
      ['KarpenterNodeRole-demo'],
      'Karpenter made the profile for the node role install made',
    )
    // doctor's verdict beside Karpenter's own condition
    const doc = await karpctlOn(bed, ['doctor', '--json'])
    const check = (JSON.parse(doc.stdout) as { checks: { id: string; status: string }[] }).checks.find(
      (c) => c.id === 'nodeclass-ready',
    )
    assert.equal(check?.status, 'pass', shown(doc))
  })

  test('install --smoke-test passes because Karpenter launched a NodeClaim: an instance in moto with Karpenter’s tags', async (t) => {
    const r = await installOn(bed, ['--yes', '--json', '--smoke-test'])
    assert.equal(r.code, 0, shown(r))
    const smoke = (JSON.parse(r.stdout) as { smokeTest: { ok: boolean; nodeClaim: string; message: string } })
      .smokeTest
    assert.ok(smoke.ok, smoke.message)
    const claim = await bed.kube.get(`${NODECLAIMS}/${smoke.nodeClaim}`)
    assert.ok(claim, `NodeClaim ${smoke.nodeClaim} exists`)
    assert.equal(claim.metadata.labels['karpenter.sh/nodepool'], 'default')
    assert.ok(isTrue(claim, 'Launched') && isTrue(claim, 'Registered') && isTrue(claim, 'Initialized'))
    const id = instanceIdOf(claim)
    const inst = (await karpenterInstances(bed)).find((i) => i.InstanceId === id)
    assert.ok(inst, `instance ${id} of ${smoke.nodeClaim} in moto`)
    assert.equal(tagOf(inst, 'karpenter.sh/nodeclaim'), smoke.nodeClaim)
    assert.equal(tagOf(inst, 'karpenter.sh/nodepool'), 'default')
    assert.equal(tagOf(inst, 'karpenter.k8s.aws/ec2nodeclass'), 'default')
    assert.equal(tagOf(inst, 'kubernetes.io/cluster/demo'), 'owned')
    // moto launches the first override, not the cheapest: the options, not the type
    const options = (claim.spec.requirements as KubeObject[]).find(
      (x) => x.key === 'node.kubernetes.io/instance-type',
    )?.values as string[]
    assert.ok(
      options?.includes(inst.InstanceType!),
      `${inst.InstanceType} among the claim's ${options?.length} options`,
    )
    t.diagnostic(
      `${smoke.message}; NodeClaim ${smoke.nodeClaim} → instance ${id} (${inst.InstanceType}, ${options.length} instance-type options)`,
    )
    // the launch template's security groups reached the instance: no SecurityGroupDrift
    const nc = await bed.kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default')
    assert.deepEqual(
      inst.SecurityGroups?.map((g) => g.GroupId).sort(),
      (nc!.status.securityGroups as KubeObject[]).map((g) => g.id).sort(),
    )
    await new Promise((res) => setTimeout(res, 5000))
    const later = await bed.kube.get(`${NODECLAIMS}/${smoke.nodeClaim}`)
    assert.ok(!isTrue(later, 'Drifted'), JSON.stringify(conditionOf(later, 'Drifted')))
  })

  test('a tenant’s pod gets a NodeClaim from the tenant’s NodePool, whose instance profile holds the tenant’s role', async (t) => {
    const add = await karpctlOn(bed, ['tenant', 'add', 'acme', '--yes'])
    assert.equal(add.code, 0, shown(add))
    await bed.kube.create(
      pendingPod(
        'acme-app',
        { 'karpctl.io/tenant': 'acme' },
        {
          toleration: { key: 'karpctl.io/tenant', operator: 'Equal', value: 'acme', effect: 'NoSchedule' },
          keepNode: true,
        },
      ),
    )
    const claim = await waitForClaim(bed, 'a NodeClaim of NodePool acme, initialised', 'acme', (c) =>
      isTrue(c, 'Initialized'),
    )
    assert.equal(claim.spec.nodeClassRef.name, 'acme')
    await waitFor(
      'pod acme-app running on the tenant node',
      async () =>
        (await bed.kube.get('/api/v1/namespaces/default/pods/acme-app'))?.spec?.nodeName ===
        claim.metadata.name,
      { timeoutMs: 60_000, intervalMs: 500 },
    )
    // The profile Karpenter made for the tenant's class, and launched the claim's instance with
    const nc = await bed.kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/acme')
    const profileName = String(nc?.status?.instanceProfile)
    const ip = await awsClients(bed).iam.send(
      new GetInstanceProfileCommand({ InstanceProfileName: profileName }),
    )
    assert.deepEqual(
      ip.InstanceProfile?.Roles?.map((x) => x.RoleName),
      ['KarpenterNodeRole-demo-acme'],
    )
    const inst = (await karpenterInstances(bed)).find((i) => i.InstanceId === instanceIdOf(claim))
    assert.ok(inst, `instance of ${claim.metadata.name}`)
    assert.equal(tagOf(inst, 'karpenter.sh/nodepool'), 'acme')
    // moto keeps the association only when its CreateFleet path carried the template's profile
    const onInstance = inst.IamInstanceProfile?.Arn?.split('/').pop()
    if (onInstance) assert.equal(onInstance, profileName)
    t.diagnostic(
      `NodeClaim ${claim.metadata.name} → ${inst.InstanceId}, profile ${profileName} (on the instance: ${onInstance ?? 'not recorded by moto'}) → KarpenterNodeRole-demo-acme`,
    )
    await bed.kube.delete('/api/v1/namespaces/default/pods/acme-app')
  })

  test('a spot interruption put on the default bus reaches the queue through karpctl’s rules, and Karpenter deletes the claim', async (t) => {
    const claim = await claimForPod(bed, 'interrupted')
    const id = instanceIdOf(claim)
    assert.equal(await putSpotInterruption(bed, id), 0)
    await claimGone(bed, claim, 'after the interruption')
    // Karpenter's own word for why: the message it took from the queue, for this claim
    const said = controllerLog(bed).find(
      (l) =>
        l.message === 'initiating delete from interruption message' &&
        l.NodeClaim?.name === claim.metadata.name,
    )
    assert.equal(said?.messageKind, 'spot_interrupted', JSON.stringify(said))
    t.diagnostic(
      `interruption of ${id}: NodeClaim ${claim.metadata.name} deleted by Karpenter (moto delivered the event to SQS)`,
    )
    await bed.kube.delete('/api/v1/namespaces/default/pods/interrupted')
  })

  test('a node that never registers: after the registration timeout Karpenter deletes its claim', async (t) => {
    const known = new Set((await bed.kube.list(NODECLAIMS)).map((c) => c.metadata.uid as string))
    const release = bed.karpenter!.kubelet.holdRegistration((c) => !known.has(c.metadata.uid))
    try {
      await bed.kube.create(pendingPod('stranded', { 'karpenter.sh/nodepool': 'default' }))
      const claim = await waitForClaim(
        bed,
        'a launched NodeClaim for pod stranded',
        'default',
        (c) => !known.has(c.metadata.uid) && isTrue(c, 'Launched'),
      )
      assert.equal(
        conditionOf(claim, 'Registered')?.status,
        'Unknown',
        JSON.stringify(conditionOf(claim, 'Registered')),
      )
      await bed.kube.delete('/api/v1/namespaces/default/pods/stranded')
      await expireRegistration(bed.kube, claim.metadata.name)
      await claimGone(bed, claim, 'once its registration expired')
      t.diagnostic(
        `NodeClaim ${claim.metadata.name} (${instanceIdOf(claim)}): Registered=Unknown, expired → deleted by Karpenter`,
      )
    } finally {
      release()
    }
  })

  test('teardown --sweep with NodeClaims running leaves no instance, launch template or instance profile Karpenter made', async (t) => {
    const last = await claimForPod(bed, 'last')
    t.diagnostic(
      `running before teardown: NodeClaim ${last.metadata.name} (${instanceIdOf(last)}) for pod last`,
    )
    const before = await karpenterMade(bed)
    assert.ok(before.instances.length >= 1, JSON.stringify(before))
    // Launch templates are not asserted here: Karpenter keeps them only while a launch needs them, and
    // deletes them itself; what teardown must leave is none (asserted after).
    assert.ok(before.profiles.length >= 2, `the default and the tenant's: ${JSON.stringify(before)}`)
    // Karpenter terminates its instances and deletes its launch templates itself while it still runs
    // (teardown waits for each EC2NodeClass's finalizer); its instance profiles go to its garbage
    // collector, which ISOLATED_VPC stops here (moto's ListInstanceProfiles ignores PathPrefix):
    // --sweep deletes what Karpenter tagged for the cluster.
    const r = await teardownOn(bed, ['--sweep'])
    assert.equal(r.code, 0, shown(r))
    assert.deepEqual(await karpenterMade(bed), { instances: [], launchTemplates: [], profiles: [] })
    t.diagnostic(
      `teardown --sweep: gone ${before.instances.length} instance(s) ${before.instances.join(', ')}, launch templates ${before.launchTemplates.join(', ')}, instance profiles ${before.profiles.join(', ')}`,
    )
  })
})
