// The AMI family against the userData and the AMIs, as Karpenter v1.14.1's provider builds user data
// (aws/karpenter-provider-aws pkg/providers/amifamily/bootstrap: nodeadm.go, eksbootstrap.go, bottlerocket.go).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EC2NodeClass } from '../../../../src/facts/types.js'
import {
  amiFamilyOf,
  familyOfAmiName,
  userDataCauses,
  userDataKind,
  userDataShape,
} from '../../../../src/why/node/user-data.js'
import { healthyNodeClass } from '../../../helpers/facts.js'

const klass = (over: Partial<EC2NodeClass['spec']>, amis?: { id: string; name?: string }[]): EC2NodeClass => {
  const nc = healthyNodeClass()
  nc.spec = { ...nc.spec, ...over }
  if (amis) nc.status = { ...nc.status, amis }
  return nc
}
const judge = (nc: EC2NodeClass) => userDataCauses(nc, userDataShape(nc.spec.userData))

test('the family: an alias term first, else spec.amiFamily', () => {
  assert.equal(amiFamilyOf(klass({ amiSelectorTerms: [{ alias: 'bottlerocket@v1.30.0' }] })), 'Bottlerocket')
  assert.equal(amiFamilyOf(klass({ amiSelectorTerms: [{ id: 'ami-1' }], amiFamily: 'AL2' })), 'AL2')
  assert.equal(
    amiFamilyOf(klass({ amiSelectorTerms: [{ id: 'ami-1' }], amiFamily: 'Windows2022' })),
    'Windows',
  )
  assert.equal(amiFamilyOf(klass({ amiSelectorTerms: [{ id: 'ami-1' }] })), undefined)
})

test('what a userData reads as', () => {
  assert.equal(userDataKind('#!/bin/bash\n/etc/eks/bootstrap.sh demo'), 'shell')
  assert.equal(userDataKind('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n'), 'mime')
  assert.equal(
    userDataKind(
      'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 110\n',
    ),
    'nodeconfig',
  )
  assert.equal(userDataKind('#cloud-config\npackages:\n  - jq\n'), 'yaml')
  assert.equal(
    userDataKind(
      '[settings.kubernetes]\n"max-pods" = 110\n[settings.kernel.sysctl]\n"fs.inotify.max_user_instances" = "8192"\n',
    ),
    'toml',
  )
})

test('Bottlerocket with a userData that is not TOML: Karpenter fails the launch (aws/karpenter-provider-aws#3536, #5915)', () => {
  const [c] = judge(
    klass({ amiSelectorTerms: [{ alias: 'bottlerocket@latest' }], userData: '#!/bin/bash\necho hi\n' }),
  )
  assert.equal(c?.status, 'fail')
  assert.match(
    c?.message ?? '',
    /\(Bottlerocket\) spec\.userData is not TOML \(it reads as shell\).*invalid UserData/,
  )
  assert.match(
    c?.fix?.commands?.[0] ?? '',
    /^kubectl patch ec2nodeclass default --type merge -p '\{"spec":\{"userData":null\}\}'$/,
  )
  // A TOML bootstrap-container setting is TOML: not this cause (aws/karpenter-provider-aws#8131 is a different failure).
  const ok = judge(
    klass({
      amiSelectorTerms: [{ alias: 'bottlerocket@latest' }],
      userData: '[settings.bootstrap-containers.myscript]\nmode = "once"\nuser-data = "IyEv"\n',
    }),
  )
  assert.equal(ok[0]?.status, 'pass')
})

test('AL2023 with a YAML map that is no NodeConfig: handed to nodeadm as one, the kubelet never starts (provider nodeadm.go parseUserData; nodeadm-config failing as in aws/karpenter-provider-aws#7889)', () => {
  const [c] = judge(klass({ userData: '#cloud-config\nruncmd:\n  - echo hi\n' }))
  assert.equal(c?.status, 'fail')
  assert.match(c?.message ?? '', /is a YAML map but no nodeadm NodeConfig/)
})

test('AL2023 with a bash bootstrap.sh userData: the script fails, what it passes never applies (provider nodeadm.go: a non-YAML-map userData is a shell part)', () => {
  const [c] = judge(
    klass({ userData: '#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args "--max-pods=50"\n' }),
  )
  assert.equal(c?.status, 'warn')
  assert.match(c?.message ?? '', /calls \/etc\/eks\/bootstrap\.sh, which AL2023 does not have/)
})

test('AL2 with a nodeadm NodeConfig: wrapped as a shell script, its settings never apply', () => {
  const [c] = judge(
    klass({
      amiSelectorTerms: [{ alias: 'al2@latest' }],
      userData: 'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet: {}\n',
    }),
  )
  assert.equal(c?.status, 'warn')
  assert.match(c?.message ?? '', /\(AL2\) spec\.userData is a nodeadm NodeConfig/)
})

test('amiFamily AL2023 over an AL2 AMI: cloud-init skips the NodeConfig and the node never joins (aws/karpenter-provider-aws#7660)', () => {
  const nc = klass({ amiSelectorTerms: [{ name: 'amazon-eks-node-1.31-v20250123' }], amiFamily: 'AL2023' }, [
    { id: 'ami-0al2', name: 'amazon-eks-node-1.31-v20250123' },
  ])
  const [c] = judge(nc)
  assert.equal(c?.status, 'fail')
  assert.match(
    c?.message ?? '',
    /builds AL2023 user data, but its AMI ami-0al2 \(amazon-eks-node-1\.31-v20250123\) is AL2/,
  )
  assert.match(c?.fix?.commands?.[0] ?? '', /"amiFamily":"AL2"/)
  assert.equal(familyOfAmiName('amazon-eks-node-al2023-x86_64-standard-1.31-v20250123'), 'AL2023')
  assert.equal(familyOfAmiName('bottlerocket-aws-k8s-1.31-x86_64-v1.30.0-abc'), 'Bottlerocket')
  assert.equal(familyOfAmiName('my-golden-image'), undefined)
})

test('Custom with no userData: nothing joins the node', () => {
  const [c] = judge(klass({ amiSelectorTerms: [{ id: 'ami-1' }], amiFamily: 'Custom' }))
  assert.equal(c?.status, 'fail')
  assert.match(c?.message ?? '', /amiFamily Custom with no spec\.userData/)
})

test('a fitting userData passes; a snapshot without its shape is unknown, never passed', () => {
  assert.equal(judge(klass({}))[0]?.status, 'pass')
  assert.equal(
    judge(klass({ userData: 'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n' }))[0]?.status,
    'pass',
  )
  const [c] = userDataCauses(klass({}), undefined)
  assert.equal(c?.status, 'unknown')
  assert.equal(userDataCauses(undefined, null)[0]?.status, 'unknown')
})

test("a snapshot keeps the userData's shape, never its text", () => {
  const shape = userDataShape('#!/bin/bash\nexport TOKEN=s3cr3t\n/etc/eks/bootstrap.sh demo\n')
  assert.deepEqual(shape, { kind: 'shell', callsBootstrapSh: true })
  assert.equal(userDataShape('  \n'), null)
})
