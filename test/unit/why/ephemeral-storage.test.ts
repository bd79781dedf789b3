import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EC2NodeClass } from '../../../src/facts/types.js'
import { amiFamilyOf, ephemeralAllocatable, rootDisk } from '../../../src/why/ephemeral-storage.js'
import { judge, type PodVerdict } from '../../../src/why/judge.js'
import { exitCodeOf } from '../../../src/why/why.js'
import { healthyNodeClass } from '../../helpers/facts.js'
import { INSTANCE_TYPES, pendingPod, whyFacts, withDeviceTypes } from '../../helpers/why.js'

const GiB = 2 ** 30
const nodeClass = (spec: Partial<EC2NodeClass['spec']> = {}) => {
  const nc = healthyNodeClass()
  nc.spec = { ...nc.spec, ...spec }
  return nc
}
const storage = (amount: string) =>
  pendingPod({
    containers: [
      { name: 'app', resources: { requests: { cpu: '500m', memory: '1Gi', 'ephemeral-storage': amount } } },
    ],
  })
const nodeClasses = (f: ReturnType<typeof whyFacts>) =>
  f.kube.nodeClasses.ok ? f.kube.nodeClasses.value : []
const verdict = (f: ReturnType<typeof whyFacts>) => {
  const r = judge(f, 'snapshot', new Date(0))
  return { r, v: (r.groups[0] as PodVerdict).nodePools[0]! }
}

test("the disk a node's ephemeral storage is on: root volume mapping, the AMI family's device, its default", () => {
  assert.equal(amiFamilyOf(nodeClass()), 'AL2023')
  assert.equal(
    amiFamilyOf(nodeClass({ amiSelectorTerms: [{ alias: 'bottlerocket@v1.20.0' }] })),
    'Bottlerocket',
  )
  assert.equal(amiFamilyOf(nodeClass({ amiSelectorTerms: [{ id: 'ami-1' }] })), 'Custom')
  assert.deepEqual(rootDisk(nodeClass()), { capacity: 20 * GiB, from: 'the AL2023 default /dev/xvda' })
  assert.deepEqual(rootDisk(nodeClass({ amiSelectorTerms: [{ alias: 'windows2022@latest' }] })), {
    capacity: 50 * GiB,
    from: 'the Windows2022 default /dev/sda1',
  })
  const mapped = nodeClass({
    blockDeviceMappings: [
      { deviceName: '/dev/xvdz', ebs: { volumeSize: '10Gi' } },
      { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100Gi' } },
    ],
  })
  assert.deepEqual(rootDisk(mapped), {
    capacity: 100 * GiB,
    from: 'spec.blockDeviceMappings[1].ebs.volumeSize',
    mapping: 1,
  })
  // Bottlerocket's pods use its data volume, /dev/xvdb, not the OS volume.
  const bottlerocket = nodeClass({
    amiSelectorTerms: [{ alias: 'bottlerocket@latest' }],
    blockDeviceMappings: [
      { deviceName: '/dev/xvda', ebs: { volumeSize: '4Gi' } },
      { deviceName: '/dev/xvdb', ebs: { volumeSize: '80Gi' } },
    ],
  })
  assert.equal(rootDisk(bottlerocket).capacity, 80 * GiB)
  // A Custom AMI: the last mapping.
  const custom = nodeClass({
    amiSelectorTerms: [{ id: 'ami-1' }],
    blockDeviceMappings: [
      { deviceName: '/dev/xvda', ebs: { volumeSize: '30Gi' } },
      { deviceName: '/dev/xvdb', ebs: { volumeSize: '60Gi' } },
    ],
  })
  assert.equal(rootDisk(custom).capacity, 60 * GiB)
})

test("allocatable: 1Gi kube-reserved and 10% nodefs eviction (Karpenter's 17Gi of a 20Gi disk), or the kubelet's", () => {
  assert.equal(ephemeralAllocatable(20 * GiB, nodeClass()), 17 * GiB)
  const kubelet = nodeClass({
    kubelet: { kubeReserved: { 'ephemeral-storage': '2Gi' }, evictionHard: { 'nodefs.available': '5%' } },
  })
  assert.equal(ephemeralAllocatable(20 * GiB, kubelet), 17 * GiB)
  const absolute = nodeClass({ kubelet: { evictionHard: { 'nodefs.available': '500Mi' } } })
  assert.equal(ephemeralAllocatable(20 * GiB, absolute), 20 * GiB - GiB - 500 * 2 ** 20)
})

test('a request the default root volume holds fits; one it does not is ruled out, with the volume to grow', () => {
  assert.equal(verdict(whyFacts([storage('16Gi')])).v.status, 'fits')
  const { v, r } = verdict(whyFacts([storage('30Gi')]))
  assert.equal(v.status, 'ruled-out')
  assert.equal(v.rule, 'ephemeral-storage')
  assert.equal(
    v.message,
    "no instance type has room for ephemeral-storage 30Gi: EC2NodeClass default's node disk is the AL2023 default /dev/xvda, 20Gi, 17Gi allocatable after kube-reserved and the nodefs eviction threshold",
  )
  assert.equal(
    v.fix?.summary,
    "grow EC2NodeClass default's /dev/xvda volume (spec.blockDeviceMappings) to 35Gi, or lower the pod's ephemeral-storage request",
  )
  assert.deepEqual(v.fix?.commands, [
    `kubectl patch ec2nodeclass default --type json -p '[{"op":"add","path":"/spec/blockDeviceMappings","value":[{"deviceName":"/dev/xvda","rootVolume":true,"ebs":{"volumeSize":"35Gi","volumeType":"gp3","encrypted":true}}]}]'`,
  ])
  assert.equal(exitCodeOf(r), 1)
})

test('an EC2NodeClass with a root volume mapping: the fix replaces its size', () => {
  const f = whyFacts([storage('60Gi')], (x) => {
    for (const nc of nodeClasses(x))
      nc.spec.blockDeviceMappings = [
        { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '50Gi' } },
      ]
  })
  const { v } = verdict(f)
  assert.equal(v.rule, 'ephemeral-storage')
  assert.match(
    v.message,
    /node disk is spec\.blockDeviceMappings\[0\]\.ebs\.volumeSize, 50Gi, 44Gi allocatable/,
  )
  assert.deepEqual(v.fix?.commands, [
    `kubectl patch ec2nodeclass default --type json -p '[{"op":"replace","path":"/spec/blockDeviceMappings/0/ebs/volumeSize","value":"68Gi"}]'`,
  ])
})

test('instanceStorePolicy RAID0: the instance store of each type is its disk, the root volume for the others', () => {
  const raid = (amount: string) =>
    whyFacts([storage(amount)], (x) => {
      withDeviceTypes(x)
      for (const nc of nodeClasses(x)) nc.spec.instanceStorePolicy = 'RAID0'
    })
  const fits = verdict(raid('200Gi')).v
  assert.equal(fits.status, 'fits')
  assert.match(fits.message, /^3 of 3 instance types have room, the smallest g5\.xlarge /)
  const { v } = verdict(raid('9000Gi'))
  assert.equal(v.status, 'ruled-out')
  assert.equal(v.rule, 'ephemeral-storage')
  assert.equal(
    v.message,
    "no instance type has room for ephemeral-storage 9000Gi: the largest instance store left is p4d.24xlarge's instance store (instanceStorePolicy RAID0), 7450.5Gi, 6704.5Gi allocatable after kube-reserved and the nodefs eviction threshold",
  )
  assert.match(v.fix!.summary, /instance-local-nvme Gt 8000\)$/)
  // Facts without instance store sizes (an older karpctl) cannot say: unknown, never a fit.
  const old = whyFacts([storage('10Gi')], (x) => {
    x.instanceTypes = { ok: true, value: INSTANCE_TYPES.map(({ instanceStorageGB: _s, ...t }) => t) }
    for (const nc of nodeClasses(x)) nc.spec.instanceStorePolicy = 'RAID0'
  })
  const u = verdict(old)
  assert.equal(u.v.status, 'unknown')
  assert.equal(u.v.rule, 'ephemeral-storage')
  assert.equal(exitCodeOf(u.r), 2)
})
