import assert from 'node:assert/strict'
import { test } from 'node:test'
import { deviceCapacity } from '../../../src/why/devices.js'
import { judge, type PodVerdict } from '../../../src/why/judge.js'
import { exitCodeOf } from '../../../src/why/why.js'
import {
  DEVICE_TYPES,
  INSTANCE_TYPES,
  pendingPod,
  pools,
  whyFacts,
  withDeviceTypes,
} from '../../helpers/why.js'

const asking = (requests: Record<string, string>) =>
  pendingPod({
    containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '2Gi', ...requests } } }],
  })
const verdict = (f: ReturnType<typeof whyFacts>) => {
  const r = judge(f, 'snapshot', new Date(0))
  return { r, v: (r.groups[0] as PodVerdict).nodePools[0]! }
}
const type = (name: string) => DEVICE_TYPES.find((t) => t.name === name)!

test("a type's devices, as Karpenter counts them from EC2's GpuInfo, NeuronInfo and EfaInfo", () => {
  assert.deepEqual(deviceCapacity(type('g5.xlarge')), { 'nvidia.com/gpu': 1 })
  assert.deepEqual(deviceCapacity(type('p4d.24xlarge')), { 'nvidia.com/gpu': 8, 'vpc.amazonaws.com/efa': 4 })
  assert.deepEqual(deviceCapacity(type('trn1.32xlarge')), {
    'aws.amazon.com/neuron': 16,
    'aws.amazon.com/neuroncore': 32,
    'vpc.amazonaws.com/efa': 8,
  })
  assert.deepEqual(
    deviceCapacity({ ...type('g5.xlarge'), gpus: [{ manufacturer: 'AMD', name: 'V520', count: 2 }] }),
    {
      'amd.com/gpu': 2,
    },
  )
  assert.deepEqual(deviceCapacity(INSTANCE_TYPES[0]!), {})
  // Facts read by a karpctl that did not read devices: unknown, not zero.
  const { gpus: _g, ...old } = type('g5.xlarge')
  assert.equal(deviceCapacity(old), undefined)
})

test('a GPU pod fits only the types with the GPU: the smallest is named, with the count', () => {
  const f = whyFacts([asking({ 'nvidia.com/gpu': '1' })], withDeviceTypes)
  const { v, r } = verdict(f)
  assert.equal(v.status, 'fits')
  assert.equal(v.rule, 'instance-types')
  assert.match(
    v.message,
    /^2 of 2 instance types have room, the smallest g5\.xlarge \(.*\) \(2 of them with nvidia\.com\/gpu 1\)$/,
  )
  assert.equal(exitCodeOf(r), 0)
})

test('eight GPUs: only p4d.24xlarge; Neuron cores and EFA interfaces are counted the same way', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ 'nvidia.com/gpu': '8' }, /the smallest p4d\.24xlarge .*\(1 of them with nvidia\.com\/gpu 8\)$/],
    [
      { 'aws.amazon.com/neuroncore': '2' },
      /the smallest inf2\.xlarge .*\(2 of them with aws\.amazon\.com\/neuroncore 2\)$/,
    ],
    [
      { 'aws.amazon.com/neuroncore': '3' },
      /the smallest trn1\.32xlarge .*\(1 of them with aws\.amazon\.com\/neuroncore 3\)$/,
    ],
    [
      { 'vpc.amazonaws.com/efa': '1' },
      /the smallest p4d\.24xlarge .*\(2 of them with vpc\.amazonaws\.com\/efa 1\)$/,
    ],
  ]
  for (const [requests, message] of cases) {
    const { v } = verdict(whyFacts([asking(requests)], withDeviceTypes))
    assert.equal(v.status, 'fits', JSON.stringify(requests))
    assert.match(v.message, message)
  }
})

test('a NodePool whose categories leave no GPU type: ruled out, naming the resource, the count and the categories to allow', () => {
  const f = whyFacts([asking({ 'nvidia.com/gpu': '1' })], withDeviceTypes)
  pools(f)[0]!.spec.template.spec.requirements!.push({
    key: 'karpenter.k8s.aws/instance-category',
    operator: 'In',
    values: ['c', 'm'],
  })
  const { v, r } = verdict(f)
  assert.equal(v.status, 'ruled-out')
  assert.equal(v.rule, 'devices')
  assert.equal(
    v.message,
    'no instance type NodePool default allows has nvidia.com/gpu 1: karpenter.k8s.aws/instance-category In [c m] leaves 4 types in [us-west-2a us-west-2b], none with it; the types that have it are instance-category g, p (families g5, p4d)',
  )
  assert.equal(
    v.fix?.summary,
    "add g, p to NodePool default's requirement on karpenter.k8s.aws/instance-category (spec.template.spec.requirements[1]) so it allows the types with nvidia.com/gpu 1: instance-category g, p (families g5, p4d)",
  )
  assert.deepEqual(v.fix?.commands, [
    `kubectl patch nodepool default --type json -p '[{"op":"replace","path":"/spec/template/spec/requirements/1/values","value":["c","m","g","p"]}]'`,
  ])
  assert.equal(exitCodeOf(r), 1)
})

test('more GPUs than any type offered has: ruled out, and the fix is the request or the zones', () => {
  const { v } = verdict(whyFacts([asking({ 'nvidia.com/gpu': '16' })], withDeviceTypes))
  assert.equal(v.status, 'ruled-out')
  assert.equal(v.rule, 'devices')
  assert.equal(
    v.message,
    'no instance type offered in [us-west-2a us-west-2b] has nvidia.com/gpu 16 (none of the 9 types there)',
  )
  assert.match(
    v.fix!.summary,
    /^no instance type EC2 describes here has nvidia\.com\/gpu 16: lower the pod's request/,
  )
})

test('facts without device counts (an older karpctl): a GPU pod is unknown, never a fit', () => {
  const { v, r } = verdict(whyFacts([asking({ 'nvidia.com/gpu': '1' })]))
  // The helper's m5/t3/c6g types have their (zero) device counts; drop them as an old snapshot would.
  assert.equal(v.status, 'ruled-out')
  const f = whyFacts([asking({ 'nvidia.com/gpu': '1' })], (x) => {
    x.instanceTypes = { ok: true, value: INSTANCE_TYPES.map(({ gpus: _g, ...t }) => t) }
  })
  const old = verdict(f)
  assert.equal(old.v.status, 'unknown')
  assert.equal(old.v.rule, 'devices')
  assert.match(old.v.message, /^devices not judged: the facts hold no GPU, Neuron or EFA counts/)
  assert.equal(exitCodeOf(old.r), 2)
  assert.equal(exitCodeOf(r), 1)
})

test('an extended resource karpctl has no count for (pod ENIs): room for the rest is unknown, not a fit', () => {
  const { v, r } = verdict(whyFacts([asking({ 'vpc.amazonaws.com/pod-eni': '1' })]))
  assert.equal(v.status, 'unknown')
  assert.match(v.message, /; instance types not judged for vpc\.amazonaws\.com\/pod-eni$/)
  assert.equal(exitCodeOf(r), 2)
})
