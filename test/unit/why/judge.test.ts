import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { NodePool } from '../../../src/facts/types.js'
import { judge, nodePoolOrder, type PodVerdict } from '../../../src/why/judge.js'
import { exitCodeOf } from '../../../src/why/why.js'
import { pendingPod, pools, whyFacts } from '../../helpers/why.js'

const only = (f: ReturnType<typeof whyFacts>): PodVerdict => {
  const r = judge(f, 'snapshot', new Date(0))
  assert.equal(r.groups.length, 1)
  return r.groups[0] as PodVerdict
}
const first = (f: ReturnType<typeof whyFacts>) => only(f).nodePools[0]

test('a NodePool every rule allows, with an instance type that has room, fits; exit 0', () => {
  const f = whyFacts()
  const g = only(f)
  assert.equal(g.outcome, 'fits')
  assert.deepEqual(g.owner, { kind: 'Deployment', name: 'web' })
  assert.equal(g.nodePools[0]?.status, 'fits')
  assert.equal(g.nodePools[0]?.rule, 'instance-types')
  assert.equal(
    g.nodePools[0]?.message,
    '4 of 5 instance types have room, the smallest c6g.large (1930m cpu / 2.9Gi memory / 29 pods allocatable; a node needs cpu 500m, memory 1Gi, pods 1)',
  )
  assert.equal(exitCodeOf(judge(f, 'snapshot')), 0)
})

test('instance types not read: unknown with the reason, never fits; exit 2', () => {
  const f = whyFacts()
  f.instanceTypes = {
    ok: false,
    error: {
      code: 'UnauthorizedOperation',
      kind: 'denied',
      message: 'not authorized',
      read: 'ec2: DescribeInstanceTypes',
    },
  }
  const v = first(f)
  assert.equal(v?.status, 'unknown')
  assert.equal(
    v?.message,
    'taints, requirements, zones and limits allow it; instance types unknown: EC2 DescribeInstanceTypes failed (UnauthorizedOperation) (a node needs cpu 500m, memory 1Gi)',
  )
  const r = judge(f, 'snapshot')
  assert.deepEqual(r.unreadable, ['EC2 instance types: UnauthorizedOperation (not authorized)'])
  assert.equal(exitCodeOf(r), 2)
  // A snapshot saved before instance types were read: unknown too.
  const old = whyFacts()
  delete old.instanceTypes
  delete old.offerings
  assert.match(first(old)?.message ?? '', /instance types unknown: the snapshot holds no EC2 instance types/)
  assert.equal(first(old)?.status, 'unknown')
})

test('taints: the template taint not tolerated rules the NodePool out, with the toleration patch for the Deployment', () => {
  const f = whyFacts()
  pools(f)[0]!.spec.template.spec.taints = [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }]
  pools(f)[0]!.spec.template.spec.startupTaints = [
    { key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' },
  ]
  const v = first(f)
  assert.equal(v?.status, 'ruled-out')
  assert.equal(
    v?.message,
    'did not tolerate taint nvidia.com/gpu=true:NoSchedule (spec.template.spec.taints)',
  )
  assert.deepEqual(v?.fix?.commands, [
    `kubectl -n shop patch deployment web --type json -p '[{"op":"add","path":"/spec/template/spec/tolerations","value":[{"key":"nvidia.com/gpu","operator":"Equal","value":"true","effect":"NoSchedule"}]}]'`,
  ])
  assert.equal(exitCodeOf(judge(f, 'snapshot')), 1)
  // Tolerated: startupTaints need no toleration.
  const g = whyFacts([pendingPod({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] })])
  pools(g)[0]!.spec.template.spec.taints = pools(f)[0]!.spec.template.spec.taints
  pools(g)[0]!.spec.template.spec.startupTaints = pools(f)[0]!.spec.template.spec.startupTaints
  assert.equal(first(g)?.status, 'fits')
})

test('requirements: a NodePool requirement without the value, with the patch that adds it', () => {
  const f = whyFacts([pendingPod({ nodeSelector: { 'karpenter.sh/capacity-type': 'reserved' } })])
  const v = first(f)
  assert.equal(v?.rule, 'requirements')
  assert.equal(
    v?.message,
    'incompatible requirements, key karpenter.sh/capacity-type, karpenter.sh/capacity-type In [reserved] not in karpenter.sh/capacity-type In [on-demand spot]',
  )
  assert.deepEqual(v?.fix?.commands, [
    `kubectl patch nodepool default --type json -p '[{"op":"replace","path":"/spec/template/spec/requirements/0/values","value":["on-demand","spot","reserved"]}]'`,
  ])
})

test('requirements: a custom label does not have known values; the fix labels the NodePool', () => {
  const v = first(whyFacts([pendingPod({ nodeSelector: { team: 'payments' } })]))
  assert.equal(v?.message, 'label "team" does not have known values')
  assert.deepEqual(v?.fix?.commands, [
    `kubectl patch nodepool default --type merge -p '{"spec":{"template":{"metadata":{"labels":{"team":"payments"}}}}}'`,
  ])
  const f = whyFacts([pendingPod({ nodeSelector: { team: 'payments' } })])
  pools(f)[0]!.spec.template.metadata = { labels: { team: 'payments' } }
  assert.equal(first(f)?.status, 'fits')
})

test('node affinity: terms are OR-ed, expressions within a term AND-ed', () => {
  const term = (...e: { key: string; operator: string; values?: string[] }[]) => ({ matchExpressions: e })
  const affinity = (...terms: ReturnType<typeof term>[]) => ({
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
  })
  const spot = { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }
  const team = { key: 'team', operator: 'Exists' }
  // One term: both expressions must hold, and `team` is undefined.
  const and = first(whyFacts([pendingPod({ affinity: affinity(term(spot, team)) })]))
  assert.equal(and?.message, 'label "team" does not have known values')
  // Two terms: the second fits.
  assert.equal(first(whyFacts([pendingPod({ affinity: affinity(term(team), term(spot)) })]))?.status, 'fits')
  // Neither fits: the first term's reason, and that the others did not fit either.
  const neither = first(
    whyFacts([
      pendingPod({
        affinity: affinity(
          term(team),
          term(
            { key: 'kubernetes.io/os', operator: 'DoesNotExist' },
            { key: 'karpenter.sh/capacity-type', operator: 'NotIn', values: ['on-demand', 'spot'] },
          ),
        ),
      }),
    ]),
  )
  assert.equal(
    neither?.message,
    `label "team" does not have known values (and none of the pod's other 1 node-affinity terms fits)`,
  )
})

test('zones: a bound zonal volume in a zone without a subnet of the EC2NodeClass', () => {
  const pod = pendingPod({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-0' } }] })
  const f = whyFacts([pod], (x) => {
    x.pvcs = {
      ok: true,
      value: [
        {
          metadata: { name: 'data-0', namespace: 'shop' },
          spec: { volumeName: 'pv-1', storageClassName: 'gp3' },
          status: { phase: 'Bound' },
        },
      ],
    }
    x.pvs = {
      ok: true,
      value: [
        {
          metadata: { name: 'pv-1' },
          spec: {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['us-west-2c'] },
                    ],
                  },
                ],
              },
            },
          },
        },
      ],
    }
  })
  const v = first(f)
  assert.equal(v?.rule, 'zones')
  assert.equal(
    v?.message,
    'no subnet in the zone: the pod needs topology.kubernetes.io/zone In [us-west-2c] (volume data-0 (PersistentVolume pv-1)), EC2NodeClass default has subnets in [us-west-2a us-west-2b] only',
  )
  // The NodePool's own zone requirement excludes the volume's zone: a requirements verdict.
  const g = whyFacts([pod], (x) => {
    x.pvcs = f.pvcs
    x.pvs = {
      ok: true,
      value: [
        {
          metadata: { name: 'pv-1' },
          spec: {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2b'] },
                    ],
                  },
                ],
              },
            },
          },
        },
      ],
    }
  })
  pools(g)[0]!.spec.template.spec.requirements!.push({
    key: 'topology.kubernetes.io/zone',
    operator: 'In',
    values: ['us-west-2a'],
  })
  assert.equal(
    first(g)?.message,
    'incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-west-2b] not in topology.kubernetes.io/zone In [us-west-2a]',
  )
})

test('limits: what the NodeClaims hold plus the pod and the DaemonSets it would run with', () => {
  const f = whyFacts([pendingPod()], (x) => {
    x.nodeClaims = {
      ok: true,
      value: [
        {
          metadata: { name: 'default-a', labels: { 'karpenter.sh/nodepool': 'default' } },
          status: { capacity: { cpu: '8', memory: '32Gi' } },
        },
        {
          metadata: { name: 'default-b', labels: { 'karpenter.sh/nodepool': 'default' } },
          spec: { resources: { requests: { cpu: '1500m' } } },
        },
        {
          metadata: { name: 'other', labels: { 'karpenter.sh/nodepool': 'other' } },
          status: { capacity: { cpu: '64' } },
        },
      ],
    }
    x.daemonSets = {
      ok: true,
      value: [
        {
          metadata: { name: 'aws-node', namespace: 'kube-system' },
          spec: {
            template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '100m' } } }] } },
          },
        },
      ],
    }
  })
  pools(f)[0]!.spec.limits = { cpu: '10' }
  const v = first(f)
  assert.equal(v?.rule, 'limits')
  assert.equal(
    v?.message,
    'limit cpu 10 leaves 500m cpu: its NodeClaims hold 9500m, a node for the pod needs at least 600m (with DaemonSet overhead cpu 100m)',
  )
  assert.deepEqual(v?.fix?.commands, [
    `kubectl patch nodepool default --type merge -p '{"spec":{"limits":{"cpu":"11"}}}'`,
  ])
  pools(f)[0]!.spec.limits = { cpu: '9' }
  assert.equal(first(f)?.message, 'limit cpu 9 reached: its NodeClaims hold 9500m cpu (spec.limits.cpu)')
  pools(f)[0]!.spec.limits = { nodes: '2' }
  assert.equal(first(f)?.message, 'limit nodes 2 reached: its NodeClaims hold 2 nodes (spec.limits.nodes)')
})

test("EC2NodeClass not Ready: doctor's nodeclass-ready verdict and fix", () => {
  const f = whyFacts()
  if (f.kube.nodeClasses.ok)
    f.kube.nodeClasses.value[0]!.status!.conditions = [
      { type: 'Ready', status: 'False' },
      { type: 'SubnetsReady', status: 'False', reason: 'SubnetsNotFound', message: 'no subnets matched' },
    ]
  const v = first(f)
  assert.equal(v?.rule, 'nodeclass')
  assert.equal(
    v?.message,
    'EC2NodeClass default is not Ready: SubnetsReady=False (SubnetsNotFound: no subnets matched)',
  )
  assert.ok(v?.fix?.commands?.some((c) => c.startsWith('aws ec2 describe-subnets')))
  const g = whyFacts()
  pools(g)[0]!.spec.template.spec.nodeClassRef.name = 'missing'
  assert.equal(first(g)?.message, 'NodePool default references EC2NodeClass missing, which does not exist')
})

test("EC2NodeClass not Ready while its NodePool rolls it up as not Ready: doctor's EC2NodeClass verdict comes first", () => {
  const f = whyFacts()
  if (f.kube.nodeClasses.ok)
    f.kube.nodeClasses.value[0]!.status!.conditions = [
      { type: 'Ready', status: 'False' },
      {
        type: 'InstanceProfileReady',
        status: 'False',
        reason: 'InstanceProfileNotFound',
        message: 'role not found',
      },
    ]
  // Karpenter sets the NodePool's NodeClassReady, and so its Ready, False with the EC2NodeClass.
  pools(f)[0]!.status = {
    conditions: [
      { type: 'Ready', status: 'False', reason: 'NodeClassNotReady', message: 'NodeClass not ready' },
    ],
  }
  const v = first(f)
  assert.equal(v?.rule, 'nodeclass')
  assert.equal(
    v?.message,
    'EC2NodeClass default is not Ready: InstanceProfileReady=False (InstanceProfileNotFound: role not found)',
  )
  assert.match(v?.fix?.summary ?? '', /see also node-role and passrole-node-role/)
  // A NodePool not Ready for a reason of its own (its EC2NodeClass Ready) keeps its own verdict.
  const g = whyFacts()
  pools(g)[0]!.status = {
    conditions: [{ type: 'Ready', status: 'False', reason: 'ValidationFailed', message: 'bad requirement' }],
  }
  assert.equal(
    first(g)?.message,
    'NodePool default is not Ready: Ready=False (ValidationFailed: bad requirement)',
  )
})

test('weight order: highest weight first, then by name; every NodePool judged', () => {
  const np = (name: string, weight?: number): NodePool => ({
    ...pools(whyFacts())[0]!,
    metadata: { name },
    spec: { ...pools(whyFacts())[0]!.spec, ...(weight === undefined ? {} : { weight }) },
  })
  assert.deepEqual(
    nodePoolOrder([np('b'), np('a'), np('z', 10), np('c', 50)]).map((p) => p.metadata.name),
    ['c', 'z', 'a', 'b'],
  )
  const f = whyFacts([pendingPod({ nodeSelector: { 'karpenter.sh/nodepool': 'a' } })])
  f.kube.nodePools = { ok: true, value: [np('b'), np('a', 5)] }
  const r = judge(f, 'snapshot')
  assert.deepEqual(r.order, [
    { nodePool: 'a', weight: 5 },
    { nodePool: 'b', weight: 0 },
  ])
  assert.deepEqual(
    r.groups[0]?.nodePools.map((v) => [v.nodePool, v.status]),
    [
      ['a', 'fits'],
      ['b', 'ruled-out'],
    ],
  )
})

test('pods with the same scheduling spec are one group; no NodePool at all is exit 1', () => {
  const f = whyFacts([
    pendingPod({}, 'web-6d4cf56db6-aaaaa'),
    pendingPod({}, 'web-6d4cf56db6-bbbbb'),
    pendingPod({ nodeSelector: { team: 'x' } }, 'web-6d4cf56db6-ccccc'),
  ])
  const r = judge(f, 'snapshot')
  assert.deepEqual(
    r.groups.map((g) => g.pods),
    [['web-6d4cf56db6-aaaaa', 'web-6d4cf56db6-bbbbb'], ['web-6d4cf56db6-ccccc']],
  )
  assert.equal(r.summary.pods, 3)
  f.kube.nodePools = { ok: true, value: [] }
  const none = judge(f, 'snapshot')
  assert.equal(none.groups[0]?.outcome, 'none')
  assert.match(none.groups[0]?.karpenter.activity ?? '', /no NodePool exists/)
  assert.equal(exitCodeOf(none), 1)
})

test('a failed NodePools read: could not tell, exit 2, the read named', () => {
  const f = whyFacts()
  f.kube.nodePools = {
    ok: false,
    error: {
      code: 'Forbidden',
      kind: 'denied',
      message: 'nodepools is forbidden',
      read: 'kubernetes: NodePools',
    },
  }
  const r = judge(f, 'snapshot')
  assert.equal(r.groups[0]?.outcome, 'could-not-tell')
  assert.deepEqual(r.unreadable, ['NodePools: Forbidden (nodepools is forbidden)'])
  assert.equal(exitCodeOf(r), 2)
})

test("Karpenter's own events about the pod, newest first, deduplicated", () => {
  const ev = (reason: string, message: string, at: string, component = 'karpenter') => ({
    metadata: { name: `e-${at}`, namespace: 'shop' },
    involvedObject: {
      kind: 'Pod',
      namespace: 'shop',
      name: 'web-6d4cf56db6-abcde',
      uid: 'uid-web-6d4cf56db6-abcde',
    },
    reason,
    message,
    source: { component },
    lastTimestamp: at,
  })
  const f = whyFacts([pendingPod()], (x) => {
    x.events = {
      ok: true,
      value: [
        ev(
          'FailedScheduling',
          'Failed to schedule pod, incompatible with nodepool "default"',
          '2025-01-01T00:00:01Z',
        ),
        ev(
          'FailedScheduling',
          'Failed to schedule pod, incompatible with nodepool "default"',
          '2025-01-01T00:00:02Z',
        ),
        ev('FailedScheduling', '0/3 nodes are available', '2025-01-01T00:00:03Z', 'default-scheduler'),
      ],
    }
  })
  assert.deepEqual(only(f).karpenter.events, [
    {
      reason: 'FailedScheduling',
      message: 'Failed to schedule pod, incompatible with nodepool "default"',
      count: 1,
      lastSeen: '2025-01-01T00:00:02Z',
    },
  ])
})

test('taints: the tolerations the API server adds to every pod do not make the fix append to a template list that is not there', () => {
  const defaults = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({
    key,
    operator: 'Exists' as const,
    effect: 'NoExecute' as const,
    tolerationSeconds: 300,
  }))
  const tainted = (tolerations: typeof defaults | { key: string; operator: 'Exists' }[]) => {
    const f = whyFacts([pendingPod({ tolerations })])
    pools(f)[0]!.spec.template.spec.taints = [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }]
    return first(f)?.fix?.commands?.[0] ?? ''
  }
  assert.match(tainted(defaults), /"path":"\/spec\/template\/spec\/tolerations","value":\[/)
  assert.match(
    tainted([...defaults, { key: 'team', operator: 'Exists' }]),
    /"path":"\/spec\/template\/spec\/tolerations\/-","value":\{/,
  )
})
