// doctor judged beside Karpenter itself (issue 34, item 2): the bed runs the real controller v1.14.1
// (bed/karpenter.ts) and the real kube-scheduler, and plays only the kubelet. Each scenario breaks one
// thing for real, waits for Karpenter to say so with its OWN condition or event, asserts doctor's
// finding on the same object, runs the finding's printed `$` lines as a user pastes them
// (bed/printed.ts), then waits for Karpenter to mark the object Ready or to launch the node, and
// asserts doctor passes. Nothing here writes a condition, a NodeClaim or an event.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Finding } from '../../src/checks/types.js'
import type { NodeReport } from '../../src/why/node/verdict.js'
import {
  EC2NODECLASSES,
  NODECLAIMS,
  NODEPOOLS,
  conditionOf,
  controllerLog,
  eventsAbout,
  isTrue,
  nodePoolOf,
  pendingPod,
  waitForCondition,
} from './bed/karpenter-objects.js'
import {
  doctorReport,
  installOn,
  KARPENTER_VERSION,
  karpctlOn,
  parseJsonOut,
  runPrinted,
  seedBareCluster,
  shown,
  startBed,
  waitFor,
  type Bed,
  type DoctorReport,
  type KubeObject,
} from './bed/index.js'

const CLASS = `${EC2NODECLASSES}/default`
const POOL = `${NODEPOOLS}/default`

const checkOf = (r: DoctorReport, id: string) => r.checks.find((c) => c.id === id)
const failsOf = (r: DoctorReport, id: string): Finding[] =>
  (checkOf(r, id)?.findings ?? []).filter((f) => f.status === 'fail')
const lines = (r: DoctorReport, id: string) =>
  `${id}: ${JSON.stringify(checkOf(r, id)?.findings.map((f) => `${f.status} ${f.subject}: ${f.message}`))}`

/**
 * The printed lines a user can paste on the bed: all but the controller-log grep, which needs the
 * controller's pod (the bed runs Karpenter out of cluster: there is no pod to read logs from).
 */
const pastable = (f: Finding) => f.fix!.commands!.filter((c) => !/ logs deploy\//.test(c))

/** doctor's check `id` passes (every finding on it pass) */
function assertPasses(r: DoctorReport, id: string) {
  assert.equal(checkOf(r, id)?.status, 'pass', lines(r, id))
}

describe(`doctor beside the real Karpenter controller v${KARPENTER_VERSION}`, { timeout: 1_200_000 }, () => {
  let bed: Bed
  let scratch: string

  before(async () => {
    bed = await startBed({ karpenter: true })
    scratch = mkdtempSync(join(tmpdir(), 'karpctl-doctor-karpenter-'))
    // CONFIG_MAP: moto has no access-entry API (as karpenter.e2e and the install matrix's karpctl row)
    await seedBareCluster(bed, { authenticationMode: 'CONFIG_MAP' })
    const r = await installOn(bed, ['--yes', '--json'])
    assert.equal(r.code, 0, shown(r))
    await bed.karpenter!.controller.ready()
    await waitForCondition(bed, CLASS, 'Ready', { status: 'True' })
    await waitForCondition(bed, POOL, 'Ready', { status: 'True' })
  })
  after(async () => {
    if (scratch) rmSync(scratch, { recursive: true, force: true })
    await bed?.stop()
  })

  test('healthy: Karpenter marks the EC2NodeClass and the NodePool Ready, and doctor passes both checks on them', async () => {
    const r = await doctorReport(bed)
    assertPasses(r, 'nodeclass-ready')
    assertPasses(r, 'discovery-tags')
  })

  // Field: kubernetes-sigs/karpenter#1516 (a nodeClassRef Karpenter cannot resolve leaves the NodePool
  // not Ready), aws/karpenter-provider-aws#7736 ("no nodepools found": NodePools ignored while not Ready).
  test('a NodePool naming an EC2NodeClass that does not exist: Karpenter says NodeClassReady=False (NodeClassNotFound), doctor fails it; the printed patch makes Karpenter mark it Ready', async (t) => {
    await bed.kube.create(
      nodePoolOf('batch', 'defualt', [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }]),
    )
    try {
      const np = await waitForCondition(bed, `${NODEPOOLS}/batch`, 'NodeClassReady', {
        status: 'False',
        reason: 'NodeClassNotFound',
      })
      assert.equal(conditionOf(np, 'Ready')?.status, 'False', JSON.stringify(np.status?.conditions))
      const r = await doctorReport(bed)
      const f = failsOf(r, 'nodeclass-ready').find((x) => x.subject === 'nodepool/batch')
      assert.ok(f, lines(r, 'nodeclass-ready'))
      assert.match(f.message, /references EC2NodeClass defualt, which does not exist/)
      await runPrinted(bed, scratch, f.fix!.commands!)
      await waitForCondition(bed, `${NODEPOOLS}/batch`, 'Ready', { status: 'True' })
      assertPasses(await doctorReport(bed), 'nodeclass-ready')
      t.diagnostic(
        `Karpenter: NodePool batch NodeClassReady=False (NodeClassNotFound) → after "${f.fix!.commands![0]}" Ready=True`,
      )
    } finally {
      await bed.kube.delete(`${NODEPOOLS}/batch`)
    }
  })

  // Field: aws/karpenter-provider-aws#1558 and #3341 ("no subnets matched selector
  // map[karpenter.sh/discovery:…]": the getting-started value of another cluster).
  test('a subnet selector copied from another cluster: Karpenter says SubnetsReady=False (SubnetsNotFound) and the NodePool not Ready; doctor fails discovery-tags and nodeclass-ready; the printed fix makes Karpenter mark both Ready', async (t) => {
    await bed.kube.mergePatch(CLASS, {
      spec: { subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'karpenter-demo' } }] },
    })
    const nc = await waitForCondition(bed, CLASS, 'SubnetsReady', {
      status: 'False',
      reason: 'SubnetsNotFound',
    })
    assert.equal(conditionOf(nc, 'Ready')?.status, 'False')
    await waitForCondition(bed, POOL, 'NodeClassReady', { status: 'False' })
    const r = await doctorReport(bed)
    const ready = failsOf(r, 'nodeclass-ready').find((x) => x.subject === 'ec2nodeclass/default')
    assert.match(ready?.message ?? '', /SubnetsReady=False \(SubnetsNotFound/, lines(r, 'nodeclass-ready'))
    assert.ok(
      failsOf(r, 'nodeclass-ready').some((x) => x.subject === 'nodepool/default'),
      `the NodePool Karpenter marked not Ready: ${lines(r, 'nodeclass-ready')}`,
    )
    const tags = failsOf(r, 'discovery-tags')
    assert.ok(
      tags.some((x) => /selects karpenter\.sh\/discovery=karpenter-demo, not this cluster/.test(x.message)),
      lines(r, 'discovery-tags'),
    )
    for (const f of tags) await runPrinted(bed, scratch, f.fix!.commands!)
    await waitForCondition(bed, CLASS, 'Ready', { status: 'True' })
    await waitForCondition(bed, POOL, 'Ready', { status: 'True' })
    const again = await doctorReport(bed)
    assertPasses(again, 'discovery-tags')
    assertPasses(again, 'nodeclass-ready')
    t.diagnostic(
      `Karpenter: SubnetsReady=False (SubnetsNotFound) → after ${tags.flatMap((f) => f.fix!.commands!).length} printed line(s) Ready=True`,
    )
  })

  // Field: aws/karpenter-provider-aws#5292 (a subnet/security-group id in the selector that matches
  // nothing, found only by its effect). A deleted or mistyped group id: tagging the cluster's groups, the
  // fix doctor used to print, leaves Karpenter at SecurityGroupsNotFound (an id term ignores tags).
  test('a security-group selector naming a group that does not exist: Karpenter says SecurityGroupsReady=False (SecurityGroupsNotFound); doctor’s printed fix adds the discovery term and Karpenter marks the class Ready', async (t) => {
    await bed.kube.mergePatch(CLASS, {
      spec: { securityGroupSelectorTerms: [{ id: 'sg-0123456789abcdef0' }] },
    })
    const nc = await waitForCondition(bed, CLASS, 'SecurityGroupsReady', {
      status: 'False',
      reason: 'SecurityGroupsNotFound',
    })
    assert.equal(conditionOf(nc, 'Ready')?.status, 'False')
    const r = await doctorReport(bed)
    const ready = failsOf(r, 'nodeclass-ready').find((x) => x.subject === 'ec2nodeclass/default')
    assert.match(ready?.message ?? '', /SecurityGroupsReady=False \(SecurityGroupsNotFound/)
    const f = failsOf(r, 'discovery-tags').find((x) => x.code === 'security-groups-unmatched')
    assert.ok(f, lines(r, 'discovery-tags'))
    assert.match(f.message, /id=sg-0123456789abcdef0\) matches no security group/)
    await runPrinted(bed, scratch, f.fix!.commands!)
    const fixed = await waitForCondition(bed, CLASS, 'Ready', { status: 'True' })
    assert.ok(isTrue(fixed, 'SecurityGroupsReady'))
    assert.ok((fixed.status.securityGroups as KubeObject[]).length >= 1, JSON.stringify(fixed.status))
    const again = await doctorReport(bed)
    assertPasses(again, 'discovery-tags')
    assertPasses(again, 'nodeclass-ready')
    t.diagnostic(
      `Karpenter: SecurityGroupsReady=False (SecurityGroupsNotFound) → after ${JSON.stringify(f.fix!.commands)} Ready with ${JSON.stringify(fixed.status.securityGroups)}`,
    )
  })

  // Field: aws/karpenter-provider-aws#6393 (an AMI pinned by id that Karpenter no longer finds: no
  // node launches from the class). The id of an AMI that does not exist.
  test('an AMI pinned by an id that does not exist: Karpenter says AMIsReady=False (AMINotFound), doctor fails nodeclass-ready naming it; the printed alias patch makes Karpenter resolve AMIs again', async (t) => {
    await bed.kube.mergePatch(CLASS, {
      spec: { amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] },
    })
    await waitForCondition(bed, CLASS, 'AMIsReady', { status: 'False', reason: 'AMINotFound' })
    const r = await doctorReport(bed)
    const f = failsOf(r, 'nodeclass-ready').find((x) => x.subject === 'ec2nodeclass/default')
    assert.match(
      f?.message ?? '',
      /AMIsReady=False \(AMINotFound: AMISelector did not match any AMIs\)/,
      lines(r, 'nodeclass-ready'),
    )
    await runPrinted(bed, scratch, pastable(f!))
    const fixed = await waitForCondition(bed, CLASS, 'Ready', { status: 'True' })
    assert.ok((fixed.status.amis as KubeObject[]).length >= 1, JSON.stringify(fixed.status.amis))
    assertPasses(await doctorReport(bed), 'nodeclass-ready')
    t.diagnostic(
      `Karpenter: AMIsReady=False (AMINotFound) → after ${JSON.stringify(pastable(f!))} Ready, AMIs ${JSON.stringify((fixed.status.amis as KubeObject[]).map((a) => a.id))}`,
    )
  })

  // Field: the getting-started role name with the cluster part dropped (`KarpenterNodeRole-${CLUSTER_NAME}`
  // templated by hand), the node-role near miss of issue 35's field corpus. A role that does not exist:
  // Karpenter v1.14.1's instance-profile reconciler returns its error and sets no condition, so
  // InstanceProfileReady stays Unknown and the reason is only in its log.
  test('an EC2NodeClass naming a node role that does not exist: Karpenter leaves InstanceProfileReady Unknown and logs why; doctor names the role meant, and its printed patch makes Karpenter mark the class Ready', async (t) => {
    const nc = (await bed.kube.get(CLASS))!
    await bed.kube.create({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'batch' },
      spec: { ...nc.spec, role: 'KarpenterNodeRole' },
    })
    try {
      const path = `${EC2NODECLASSES}/batch`
      const seen = await waitForCondition(bed, path, 'SubnetsReady', { status: 'True' })
      let said: KubeObject | undefined
      await waitFor(
        'Karpenter logs the instance profile it could not make for EC2NodeClass batch',
        async () =>
          !!(said = controllerLog(bed).find(
            (l) =>
              l.level === 'ERROR' &&
              /creating instance profile/.test(String(l.error)) &&
              JSON.stringify(l).includes('batch'),
          )),
        { timeoutMs: 60_000, intervalMs: 500, proc: bed.procs.karpenter },
      )
      const now = await bed.kube.get(path)
      assert.equal(
        conditionOf(now, 'InstanceProfileReady')?.status,
        'Unknown',
        JSON.stringify(now?.status?.conditions),
      )
      assert.notEqual(conditionOf(now, 'Ready')?.status, 'True')
      const r = await doctorReport(bed)
      const role = failsOf(r, 'node-role').find((x) => x.code === 'role-misnamed')
      assert.ok(role, lines(r, 'node-role'))
      assert.match(
        role.message,
        /node role KarpenterNodeRole \(.*\) does not exist; KarpenterNodeRole-demo has node access/,
      )
      const ready = checkOf(r, 'nodeclass-ready')?.findings.find((x) => x.subject === 'ec2nodeclass/batch')
      assert.equal(ready?.status, 'warn', lines(r, 'nodeclass-ready'))
      assert.match(ready!.message, /not InstanceProfileReady=Unknown/)
      await runPrinted(bed, scratch, role.fix!.commands!)
      const fixed = await waitForCondition(bed, path, 'Ready', { status: 'True' })
      const again = await doctorReport(bed)
      assertPasses(again, 'node-role')
      assertPasses(again, 'nodeclass-ready')
      t.diagnostic(
        `Karpenter: SubnetsReady=${conditionOf(seen, 'SubnetsReady')?.status}, InstanceProfileReady=Unknown, log "${String(said!.error).slice(0, 200)}" → after "${role.fix!.commands![0]}" Ready with profile ${String(fixed.status.instanceProfile)}`,
      )
    } finally {
      await bed.kube.delete(`${EC2NODECLASSES}/batch`)
    }
  })

  // Field: aws/karpenter-provider-aws#9390 (an spec.instanceProfile that does not exist left the class
  // without a failing condition until v1.15: v1.14.1 marks it Ready and only the launch fails).
  test('an EC2NodeClass whose spec.instanceProfile does not exist: Karpenter marks it Ready but its launch fails (NodeClaim Launched: LaunchFailed, NoSuchEntity in its log); doctor fails node-role on it; the printed create + add makes Karpenter launch the node', async (t) => {
    const { role: _role, ...spec } = (await bed.kube.get(CLASS))!.spec as KubeObject
    const pod = 'legacy-app'
    await bed.kube.create({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'legacy' },
      spec: { ...spec, instanceProfile: 'KarpenterNodeInstanceProfile-demo' },
    })
    await bed.kube.create(nodePoolOf('legacy', 'legacy'))
    try {
      await waitForCondition(bed, `${EC2NODECLASSES}/legacy`, 'Ready', { status: 'True' })
      await bed.kube.create(pendingPod(pod, { 'karpenter.sh/nodepool': 'legacy' }))
      let failed: KubeObject | undefined
      await waitFor(
        'a NodeClaim of NodePool legacy whose launch Karpenter marks LaunchFailed',
        async () =>
          !!(failed = (await bed.kube.list(NODECLAIMS, 'karpenter.sh/nodepool=legacy')).find(
            (c) => conditionOf(c, 'Launched')?.reason === 'LaunchFailed',
          )),
        { timeoutMs: 120_000, intervalMs: 1000, proc: bed.procs.karpenter },
      )
      // the reconciler's error line may land a moment after the condition
      let said: KubeObject | undefined
      await waitFor(
        "Karpenter's log: CreateFleet NoSuchEntity for the instance profile",
        async () =>
          !!(said = controllerLog(bed).find(
            (l) =>
              l['aws-operation-name'] === 'CreateFleet' &&
              /Instance profile KarpenterNodeInstanceProfile-demo not found/.test(String(l.error)),
          )),
        { timeoutMs: 60_000, intervalMs: 1000, proc: bed.procs.karpenter },
      )
      assert.equal(said?.['aws-error-code'], 'NoSuchEntity')
      // `why nodeclaim/NAME` on the claim Karpenter failed to launch (issue 37, Launched=False): the launch
      // error as Karpenter wrote it, mapped to the doctor check that finds its cause, with that check's fix.
      const claimName = failed!.metadata.name
      const w = await karpctlOn(bed, ['why', `nodeclaim/${claimName}`, '--json'])
      assert.equal(w.code, 1, shown(w))
      const wv = parseJsonOut<NodeReport>(w, 'why nodeclaim').nodes[0]!
      assert.equal(wv.outcome, 'launch-failed', JSON.stringify(wv))
      assert.match(wv.headline, /failed to launch \(Launched=False, LaunchFailed\)/)
      const cause = wv.join?.find((j) => j.source === 'node-role' && j.status === 'fail')
      assert.ok(cause?.fix?.commands?.length, `${wv.headline} ${JSON.stringify(wv.join)}`)
      assert.match(
        cause.message,
        /instance profile KarpenterNodeInstanceProfile-demo used by EC2NodeClass\/legacy does not exist/,
      )
      const r = await doctorReport(bed)
      const f = failsOf(r, 'node-role').find((x) => x.code === 'instance-profile-missing')
      assert.ok(f, lines(r, 'node-role'))
      assert.match(
        f.message,
        /instance profile KarpenterNodeInstanceProfile-demo used by EC2NodeClass\/legacy does not exist/,
      )
      // why's printed fix is doctor's: the same commands, run as printed, make Karpenter launch
      assert.deepEqual(cause.fix!.commands, f.fix!.commands)
      await runPrinted(bed, scratch, cause.fix!.commands!)
      let node = ''
      await waitFor(
        `pod ${pod} bound to a node Karpenter launched once the profile exists`,
        async () =>
          !!(node = (await bed.kube.get(`/api/v1/namespaces/default/pods/${pod}`))?.spec?.nodeName ?? ''),
        { timeoutMs: 180_000, intervalMs: 1000, proc: bed.procs.karpenter },
      )
      const claim = await bed.kube.get(`${NODECLAIMS}/${node}`)
      assert.ok(isTrue(claim, 'Launched'), JSON.stringify(claim?.status?.conditions))
      assertPasses(await doctorReport(bed), 'node-role')
      t.diagnostic(
        `Karpenter: class legacy Ready, NodeClaim ${failed!.metadata.name} Launched=${conditionOf(failed, 'Launched')?.status} (LaunchFailed: ${conditionOf(failed, 'Launched')?.message}) → after ${JSON.stringify(f.fix!.commands)} NodeClaim ${node} launched (${String(claim?.status?.providerID)})`,
      )
    } finally {
      await bed.kube.delete(`/api/v1/namespaces/default/pods/${pod}`)
      await bed.kube.delete(`${NODEPOOLS}/legacy`)
      await bed.kube.delete(`${EC2NODECLASSES}/legacy`)
    }
  })

  // Field: aws/karpenter-provider-aws#6328 and #5975 (limits that leave no instance type: pods pending
  // with "exceed limits"). A freeze (`cpu: 0`) never lifted.
  test('a NodePool frozen at cpu 0: Karpenter’s own FailedScheduling event says the limits exceed; doctor fails limits-allow-nothing; the printed patch makes Karpenter launch the node', async (t) => {
    await bed.kube.mergePatch(POOL, { spec: { limits: { cpu: '0' } } })
    const pod = 'frozen-out'
    await bed.kube.create(pendingPod(pod, { 'karpenter.sh/nodepool': 'default' }))
    try {
      let said: KubeObject | undefined
      await waitFor(
        `Karpenter's FailedScheduling event on pod ${pod} (limits)`,
        async () =>
          !!(said = (await eventsAbout(bed, 'default', pod)).find(
            (e) =>
              // kube-scheduler records FailedScheduling too, never about limits
              e.reason === 'FailedScheduling' && /exceed limits for nodepool/.test(String(e.message)),
          )),
        { timeoutMs: 120_000, intervalMs: 1000, proc: bed.procs.karpenter },
      ).catch(async (e: Error) => {
        throw new Error(
          `${e.message}\nevents: ${JSON.stringify((await eventsAbout(bed, 'default', pod)).map((x) => [x.source?.component, x.reason, x.message]))}`,
        )
      })
      assert.equal((await bed.kube.list(NODECLAIMS, 'karpenter.sh/nodepool=default')).length, 0)
      const r = await doctorReport(bed)
      const f = failsOf(r, 'nodeclass-ready').find((x) => x.code === 'limits-allow-nothing')
      assert.ok(f, lines(r, 'nodeclass-ready'))
      assert.equal(f.subject, 'nodepool/default')
      await runPrinted(bed, scratch, f.fix!.commands!)
      let node = ''
      await waitFor(
        `pod ${pod} bound to a node Karpenter launched after the lift`,
        async () =>
          !!(node = (await bed.kube.get(`/api/v1/namespaces/default/pods/${pod}`))?.spec?.nodeName ?? ''),
        { timeoutMs: 180_000, intervalMs: 1000, proc: bed.procs.karpenter },
      )
      const claim = await bed.kube.get(`${NODECLAIMS}/${node}`)
      assert.equal(claim?.metadata.labels['karpenter.sh/nodepool'], 'default')
      assert.ok(isTrue(claim, 'Launched'), JSON.stringify(claim?.status?.conditions))
      assertPasses(await doctorReport(bed), 'nodeclass-ready')
      t.diagnostic(
        `Karpenter: "${String(said!.message).slice(0, 160)}" → after the printed patch NodeClaim ${node} launched (${String(claim?.status?.providerID)})`,
      )
    } finally {
      await bed.kube.delete(`/api/v1/namespaces/default/pods/${pod}`)
    }
  })
})
