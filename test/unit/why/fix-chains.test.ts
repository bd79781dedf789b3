// Printed fixes that `npm run test:oracle` found in words only, or that did not change what they had to:
// each is applied here as printed (the oracle's own parser and patcher) and `why` must then say ✔. The
// seed is the generated case that showed the class (KARPCTL_ORACLE_SEED=<seed> KARPCTL_ORACLE_CASES=1).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { judge, type PodVerdict, type PoolVerdict } from '../../../src/why/judge.js'
import type { WhyFacts } from '../../../src/why/types.js'
import { applyPatch, parsePatch } from '../../oracle/patch.js'
import { pendingPod, pools, whyFacts, withDeviceTypes } from '../../helpers/why.js'

const verdict = (f: WhyFacts) => (judge(f, 'snapshot').groups[0] as PodVerdict).nodePools[0] as PoolVerdict

/** Applies the verdict's commands as printed; each must be a patch of an object the facts hold. */
function applyFix(f: WhyFacts, v: PoolVerdict): void {
  assert.ok(v.fix?.commands?.length, `a command, not words: ${v.fix?.summary}`)
  for (const c of v.fix.commands) {
    const p = parsePatch(c)
    assert.ok(p, `a kubectl patch: ${c}`)
    assert.ok(applyPatch(f, p), `names an object the cluster holds: ${c}`)
  }
}

const affinity = (...matchExpressions: { key: string; operator: string; values?: string[] }[]) => ({
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions }] },
  },
})

test('seed 7: the pod pins types too small for it: the fix drops its own pin and a type with room is left', () => {
  const f = whyFacts([
    pendingPod({
      containers: [{ name: 'app', resources: { requests: { cpu: '4', memory: '1Gi' } } }],
      affinity: affinity({ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }),
    }),
  ])
  const v = verdict(f)
  assert.equal(v.rule, 'instance-types')
  assert.match(
    v.fix?.summary ?? '',
    /^allow larger instance types, so that m5\.2xlarge .* is left: drop deployment\/web's own requirement on node\.kubernetes\.io\/instance-type/,
  )
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
})

test('several NodePool requirements keep the larger types out: one patch removes them, highest index first', () => {
  const f = whyFacts([pendingPod({ containers: [{ name: 'app', resources: { requests: { cpu: '4' } } }] })])
  pools(f)[0]!.spec.template.spec.requirements!.push(
    { key: 'karpenter.k8s.aws/instance-size', operator: 'In', values: ['large'] },
    { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['5'] },
  )
  const v = verdict(f)
  assert.equal(v.fix?.commands?.length, 1)
  assert.match(
    v.fix?.commands?.[0] ?? '',
    /requirements\/2"\},\{"op":"remove","path":"\/spec\/template\/spec\/requirements\/1"/,
  )
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
})

test('seed 40: the pod asks for a value the NodePool shuts out with DoesNotExist: the requirement goes', () => {
  const f = whyFacts([
    pendingPod({
      affinity: affinity({ key: 'karpenter.k8s.aws/instance-gpu-name', operator: 'In', values: ['a10g'] }),
    }),
  ])
  withDeviceTypes(f)
  pools(f)[0]!.spec.template.spec.requirements!.push({
    key: 'karpenter.k8s.aws/instance-gpu-name',
    operator: 'DoesNotExist',
  })
  const v = verdict(f)
  assert.equal(v.rule, 'requirements')
  assert.match(
    v.fix?.summary ?? '',
    /^remove NodePool default's requirement karpenter\.k8s\.aws\/instance-gpu-name DoesNotExist/,
  )
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
})

test('seed 227: the pod asks for no zone, which every node has: its own requirement goes', () => {
  const f = whyFacts([
    pendingPod({ affinity: affinity({ key: 'topology.kubernetes.io/zone', operator: 'DoesNotExist' }) }),
  ])
  pools(f)[0]!.spec.template.spec.requirements!.push({
    key: 'topology.kubernetes.io/zone',
    operator: 'In',
    values: ['us-west-2a', 'us-west-2b'],
  })
  const v = verdict(f)
  assert.equal(v.rule, 'requirements')
  assert.match(
    v.fix?.summary ?? '',
    /^drop deployment\/web's own requirement on topology\.kubernetes\.io\/zone/,
  )
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
})

test('seed 210: a NodePool label against the pod’s node affinity: a nodeSelector would not override it, the affinity goes', () => {
  const f = whyFacts([
    pendingPod({ affinity: affinity({ key: 'example.com/team', operator: 'In', values: ['b'] }) }),
  ])
  pools(f)[0]!.spec.template.metadata = { labels: { 'example.com/team': 'a' } }
  const v = verdict(f)
  assert.equal(v.rule, 'requirements')
  assert.doesNotMatch(v.fix?.commands?.[0] ?? '', /nodeSelector/)
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
  // A plain nodeSelector is still answered by selecting the NodePool's value.
  const g = whyFacts([pendingPod({ nodeSelector: { 'example.com/team': 'b' } })])
  pools(g)[0]!.spec.template.metadata = { labels: { 'example.com/team': 'a' } }
  const w = verdict(g)
  assert.match(w.fix?.commands?.[0] ?? '', /"nodeSelector":\{"example\.com\/team":"a"\}/)
  applyFix(g, w)
  assert.equal(verdict(g).status, 'fits')
})

test('seed 297: the types with the device carry no value of the NodePool’s `In` requirement: it is removed, not re-set to itself', () => {
  const f = whyFacts([
    pendingPod({
      containers: [
        {
          name: 'app',
          resources: {
            requests: { cpu: '1', 'aws.amazon.com/neuron': '1' },
            limits: { 'aws.amazon.com/neuron': '1' },
          },
        },
      ],
    }),
  ])
  withDeviceTypes(f)
  pools(f)[0]!.spec.template.spec.requirements!.push({
    key: 'karpenter.k8s.aws/instance-gpu-name',
    operator: 'In',
    values: ['a10g'],
  })
  const v = verdict(f)
  assert.equal(v.rule, 'devices')
  assert.match(
    v.fix?.summary ?? '',
    /^remove NodePool default's requirement on karpenter\.k8s\.aws\/instance-gpu-name/,
  )
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
})

test('a device the pod’s own requirement keeps out: the pod’s requirement is dropped', () => {
  const f = whyFacts([
    pendingPod({
      containers: [
        {
          name: 'app',
          resources: { requests: { cpu: '1', 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } },
        },
      ],
      affinity: affinity({ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }),
    }),
  ])
  withDeviceTypes(f)
  const v = verdict(f)
  assert.equal(v.rule, 'devices')
  assert.match(
    v.fix?.summary ?? '',
    /own requirement on karpenter\.k8s\.aws\/instance-family .*nvidia\.com\/gpu 1/,
  )
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
})

test('seed 1: no type with the device is offered in the zone the pod asks: that requirement is widened', () => {
  const gpu = { requests: { cpu: '1', 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } }
  const f = whyFacts([
    pendingPod({
      containers: [{ name: 'app', resources: gpu }],
      nodeSelector: { 'topology.kubernetes.io/zone': 'us-west-2a' },
    }),
  ])
  withDeviceTypes(f)
  // The types with GPUs are offered in us-west-2b only.
  const fo = f.offerings
  assert.ok(fo?.ok)
  fo.value = fo.value.filter((o) => !/^(g5|p4d)\./.test(o.instanceType) || o.zone === 'us-west-2b')
  const v = verdict(f)
  assert.equal(v.rule, 'devices')
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
  // With no zone asked, the cause is the subnets: the zones EC2 offers them in are named.
  const h = whyFacts([pendingPod({ containers: [{ name: 'app', resources: gpu }] })])
  withDeviceTypes(h)
  const ho = h.offerings
  assert.ok(ho?.ok)
  ho.value = ho.value.map((o) => (/^(g5|p4d)\./.test(o.instanceType) ? { ...o, zone: 'us-west-2c' } : o))
  assert.match(
    verdict(h).fix?.summary ?? '',
    /^EC2 offers types with nvidia\.com\/gpu 1 in us-west-2c only: give EC2NodeClass default a subnet there/,
  )
})

test('seeds 13, 114: more devices than any type has, or kinds no type combines: the requests are lowered to the most one type has', () => {
  // 64 GPUs, more than p4d.24xlarge's 8: lowered to 8 in requests and limits (they must be equal).
  const g = whyFacts([
    pendingPod({
      containers: [
        {
          name: 'app',
          resources: { requests: { 'nvidia.com/gpu': '64' }, limits: { 'nvidia.com/gpu': '64' } },
        },
      ],
    }),
  ])
  withDeviceTypes(g)
  const w = verdict(g)
  assert.equal(w.rule, 'devices')
  assert.match(
    w.fix?.summary ?? '',
    /^no instance type EC2 describes here has nvidia\.com\/gpu 64: lower the pod's request .*here to nvidia\.com\/gpu 8, the most one type has$/,
  )
  assert.match(
    w.fix?.commands?.[0] ?? '',
    /"op":"replace","path":"\/spec\/template\/spec\/containers\/0\/resources\/limits\/nvidia.com~1gpu","value":"8"/,
  )
  applyFix(g, w)
  assert.equal(verdict(g).status, 'fits')
  // A GPU and a Neuron device: no type has both; the GPU (the kind a type keeps most of) stays.
  const both = { 'nvidia.com/gpu': '1', 'aws.amazon.com/neuron': '1' }
  const n = whyFacts([
    pendingPod({ containers: [{ name: 'app', resources: { requests: both, limits: both } }] }),
  ])
  withDeviceTypes(n)
  const nv = verdict(n)
  assert.equal(nv.rule, 'devices')
  applyFix(n, nv)
  assert.equal(verdict(n).status, 'fits')
})

test("seed 13: after the requirements are lifted the largest type left is still too small: the pod's requests are lowered, sidecar first", () => {
  const f = whyFacts([
    pendingPod({
      initContainers: [
        { name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '1', memory: '1Gi' } } },
        { name: 'migrate', resources: { requests: { cpu: '900', memory: '1Gi' } } },
      ],
      containers: [
        { name: 'app', resources: { requests: { cpu: '900', memory: '1Gi' }, limits: { cpu: '900' } } },
      ],
    }),
  ])
  const v = verdict(f)
  assert.equal(v.rule, 'instance-types')
  assert.match(
    v.fix?.summary ?? '',
    /^lower the pod's requests to fit .*; here the pod's requests are lowered$/,
  )
  const ops = JSON.parse(/-p '(.*)'$/.exec(v.fix?.commands?.[0] ?? '')?.[1] ?? '[]') as { path: string }[]
  // The sidecar keeps its 1 cpu; the app and the migration run to what is left.
  assert.deepEqual(
    ops.map((o) => o.path),
    [
      '/spec/template/spec/containers/0/resources/requests/cpu',
      '/spec/template/spec/containers/0/resources/limits/cpu',
      '/spec/template/spec/initContainers/1/resources/requests/cpu',
    ],
  )
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
})

test('a device no type EC2 describes has at all: the printed patch drops the request, and the pod fits', () => {
  const gaudi = { 'habana.ai/gaudi': '1' }
  const f = whyFacts([
    pendingPod({
      containers: [{ name: 'app', resources: { requests: { cpu: '1', ...gaudi }, limits: gaudi } }],
    }),
  ])
  withDeviceTypes(f)
  const v = verdict(f)
  assert.equal(v.rule, 'devices')
  assert.match(v.fix?.summary ?? '', /; here they are dropped: no type EC2 describes has any$/)
  applyFix(f, v)
  assert.equal(verdict(f).status, 'fits')
})
