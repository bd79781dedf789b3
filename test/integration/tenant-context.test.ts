// What the tenant commands share, on the wire (test/helpers/mock-cluster.ts's `demo`): tenantContext
// builds its own clients, reads the install through doctor's collectors and the caller through STS, and
// proves the kube context is the cluster's only for a command that writes; regionZones lists the
// region's zones, opted in or not, and says nothing when AWS does not answer.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { Aws } from '../../src/context/aws.js'
import { createRunContext } from '../../src/context/run-context.js'
import { regionZones, tenantContext } from '../../src/tenant/command.js'
import { CALLER_ARN, startMockCluster, type MockOptions } from '../helpers/mock-cluster.js'
import { DEMO_INSTALL } from '../helpers/tenant-spec.js'

/** The mock cluster, and the retry mode of every client released. */
function setup(t: TestContext, o: MockOptions = {}) {
  const m = startMockCluster({ expectations: false, ...o })
  t.after(() => m.stop())
  const destroy = Aws.prototype.destroy
  const released: (string | undefined)[] = []
  t.mock.method(Aws.prototype, 'destroy', function (this: Aws) {
    released.push(this.options.retryMode)
    destroy.call(this)
  })
  return { m, released }
}

const OTHER = 'https://other.gr7.us-west-2.eks.amazonaws.com'

test("tenantContext: an adaptive client, doctor's facts, the install they show, and the caller", async (t) => {
  // Kills: L19-L26 (the context's options, the STS call, each field).
  const { m } = setup(t)
  const c = await tenantContext(m.runOptions({ maxAttempts: 1 }))
  t.after(() => c.ctx.aws.destroy())
  assert.equal(c.ctx.options.retryMode, 'adaptive')
  assert.equal(c.facts.meta.clusterName, 'demo')
  assert.deepEqual(c.install, DEMO_INSTALL)
  assert.equal(c.callerArn, CALLER_ARN)
})

test('tenantContext: a kube context on another server is refused only for a command that writes', async (t) => {
  // Kills: L19 `changes = true`, L22 `if (true)` / `if (false)`.
  const { m, released } = setup(t, {
    mutate: (s) => {
      s.cluster!.endpoint = OTHER
    },
  })
  const read = await tenantContext(m.runOptions({ maxAttempts: 1 }))
  read.ctx.aws.destroy()
  await assert.rejects(tenantContext(m.runOptions({ maxAttempts: 1 }), true), { code: 'WRONG_KUBE_CONTEXT' })
  // The refused run released its client.
  assert.deepEqual(released, ['adaptive', 'adaptive'])
})

test('tenantContext: no install is the one NOT_INSTALLED error, and the client is released', async (t) => {
  // Kills: L27 (the error swallowed), and proves the release on failure.
  // No release and no controller (a Deployment left alone is an install Argo CD or kubectl applied).
  const { m, released } = setup(t, {
    mutate: (s) => {
      s.kube.helmSecrets = []
      s.kube.deployments = []
    },
  })
  await assert.rejects(tenantContext(m.runOptions({ maxAttempts: 1 })), {
    code: 'NOT_INSTALLED',
    message:
      'no Karpenter Helm release or controller Deployment found in cluster demo: run `karpctl install` first (or `karpctl doctor` to see what is wrong)',
  })
  assert.deepEqual(released, ['adaptive'])
})

test('tenantContext: a caller STS names without an ARN is an empty one', async (t) => {
  // Kills: L26 `?? 'Stryker was here!'`.
  const { m } = setup(t, { mutate: (s) => (s.callerArn = undefined as unknown as string) })
  const c = await tenantContext(m.runOptions({ maxAttempts: 1 }))
  c.ctx.aws.destroy()
  assert.equal(c.callerArn, '')
})

/** regionZones on a client of the mock. */
async function zones(t: TestContext, o: MockOptions = {}) {
  const { m } = setup(t, o)
  const ctx = await createRunContext(m.runOptions({ maxAttempts: 1 }))
  t.after(() => ctx.aws.destroy())
  return { zones: await regionZones(ctx.aws), calls: m.calls().filter((c) => c.op.startsWith('ec2:')) }
}

test('regionZones: every zone of the region, a Local Zone not opted in too', async (t) => {
  // Kills: L37-L46 (the call, AllAvailabilityZones, the names).
  const z = await zones(t)
  assert.deepEqual(z.zones, ['us-west-2a', 'us-west-2b', 'us-west-2c', 'us-west-2d', 'us-west-2-lax-1a'])
  assert.deepEqual(
    z.calls.map((c) => [c.op, c.status]),
    [['ec2:DescribeAvailabilityZones', 200]],
  )
})

test('regionZones: a zone without a name is left out', async (t) => {
  // Kills: L46 the filter removed, `z.ZoneName && ''`, `?? 'Stryker was here!'`.
  const z = await zones(t, {
    mutate: (s) => (s.zones = [{ type: 'availability-zone', optedIn: true }, ...s.zones.slice(0, 1)]),
  })
  assert.deepEqual(z.zones, ['us-west-2a'])
})

test('regionZones: a region with no zone says nothing (undefined)', async (t) => {
  // Kills: L47.
  assert.equal((await zones(t, { mutate: (s) => (s.zones = []) })).zones, undefined)
})

test('regionZones: a denied call says nothing (undefined), and is not an error', async (t) => {
  // Kills: L48.
  const denied = await zones(t, { faults: [{ op: 'ec2:DescribeAvailabilityZones', error: 'denied' }] })
  assert.equal(denied.zones, undefined)
  assert.deepEqual(
    denied.calls.map((c) => [c.op, c.via, c.status]),
    [['ec2:DescribeAvailabilityZones', 'fault', 403]],
  )
})
