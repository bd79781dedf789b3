// Each verdict of `why node/NAME` on hand-built facts shaped as Karpenter writes them. Scenarios from
// the field: a PDB that blocks a node for days (kubernetes-sigs/karpenter#2802), nodes not
// consolidated with a 30s consolidateAfter (aws/karpenter-provider-aws#8231), a NodeClaim stuck
// before registration (aws/karpenter-provider-aws#7251), do-not-disrupt pods and empty consolidation
// (kubernetes-sigs/karpenter#3185).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { judgeNodes } from '../../../../src/why/node/judge.js'
import { nodeExitCode } from '../../../../src/why/node/why-node.js'
import { ago, event, machine, nodeFacts, NOW, pdb, pod, pool } from '../../../helpers/why-node.js'

const one = (f: Parameters<typeof judgeNodes>[0]) => {
  const r = judgeNodes(f, 'snapshot', NOW)
  assert.equal(r.nodes.length, 1)
  return { r, v: r.nodes[0] as (typeof r.nodes)[number] }
}
const stepOf = (v: ReturnType<typeof one>['v'], m: string) => v.steps.find((s) => s.method === m)

test('an empty, consolidatable node is going (Empty), with the annotation that keeps it', () => {
  const m = machine('ip-a')
  const { r, v } = one(nodeFacts({ machines: [m], selector: { kind: 'node', name: 'ip-a' } }))
  assert.equal(v.outcome, 'going')
  assert.equal(stepOf(v, 'emptiness')?.applies, 'yes')
  assert.match(v.headline, /empty and consolidatable/)
  assert.deepEqual(stepOf(v, 'emptiness')?.fix?.commands, [
    'kubectl annotate node ip-a karpenter.sh/do-not-disrupt=true',
  ])
  assert.equal(nodeExitCode(r), 0)
})

test('consolidateAfter Never: consolidation disabled, the patch that enables it; kept', () => {
  const m = machine('ip-a')
  const f = nodeFacts({
    machines: [m],
    pools: [
      pool({ disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: 'Never' } }),
    ],
    pods: [pod('web-1', 'ip-a')],
  })
  const { v } = one(f)
  assert.equal(v.outcome, 'kept')
  const c = stepOf(v, 'consolidation')
  assert.match(c?.message ?? '', /consolidateAfter is Never: consolidation is disabled/)
  assert.match(
    c?.fix?.commands?.[0] ?? '',
    /kubectl patch nodepool default --type merge -p .*consolidateAfter/,
  )
})

test('WhenEmpty and not empty: consolidation does not apply, the policy change is named', () => {
  const m = machine('ip-a')
  const { v } = one(
    nodeFacts({
      machines: [m],
      pools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '1m' } })],
      pods: [pod('web-1', 'ip-a')],
    }),
  )
  assert.match(
    stepOf(v, 'consolidation')?.message ?? '',
    /consolidationPolicy is WhenEmpty and the node is not empty/,
  )
})

test('underutilized: its pods fit on another node → going (Underutilized); no room → maybe, kept', () => {
  const a = machine('ip-a')
  const b = machine('ip-b')
  const f = nodeFacts({
    machines: [a, b],
    pods: [pod('web-1', 'ip-a'), pod('web-2', 'ip-b')],
    selector: { kind: 'node', name: 'ip-a' },
  })
  const { v } = one(f)
  assert.equal(v.outcome, 'going')
  assert.match(stepOf(v, 'consolidation')?.message ?? '', /shop\/web-1 → ip-b/)
  const full = nodeFacts({
    machines: [a, b],
    pods: [pod('web-1', 'ip-a', { cpu: '1500m' }), pod('web-2', 'ip-b', { cpu: '1500m' })],
    selector: { kind: 'node', name: 'ip-a' },
  })
  const { v: kept } = one(full)
  assert.equal(stepOf(kept, 'consolidation')?.applies, 'maybe')
  assert.equal(kept.outcome, 'kept')
})

test('not consolidatable yet: when consolidateAfter runs out after the last pod event', () => {
  const m = machine('ip-a', {
    lastPodEventMinutesAgo: 0.5,
    conditions: [
      { type: 'Launched', status: 'True' },
      { type: 'Registered', status: 'True' },
      { type: 'Initialized', status: 'True', lastTransitionTime: ago(100) },
    ],
  })
  const { v } = one(nodeFacts({ machines: [m], pods: [pod('web-1', 'ip-a')] }))
  const c = stepOf(v, 'consolidation')
  assert.equal(c?.applies, 'later')
  assert.equal(c?.at, '2026-12-04T12:00:30Z (in 30s)')
})

test('drift: the NodePool hash moved (both sides named); Drifted=True with AMIDrift names the images', () => {
  const m = machine('ip-a')
  const { v } = one(
    nodeFacts({ machines: [m], pools: [pool({ hash: '999' })], pods: [pod('web-1', 'ip-a')] }),
  )
  const d = stepOf(v, 'drift')
  assert.equal(d?.applies, 'yes')
  assert.match(
    d?.message ?? '',
    /NodePoolDrifted.*karpenter.sh\/nodepool-hash 111 on the NodeClaim, 999 on the NodePool default/,
  )
  assert.match(d?.fix?.commands?.[0] ?? '', /"reasons":\["Drifted"\]/)
  const ami = machine('ip-b', {
    imageID: 'ami-old',
    conditions: [
      { type: 'Launched', status: 'True' },
      { type: 'Registered', status: 'True' },
      { type: 'Initialized', status: 'True', lastTransitionTime: ago(500) },
      { type: 'Drifted', status: 'True', reason: 'AMIDrift', lastTransitionTime: ago(3) },
    ],
  })
  const { v: w } = one(nodeFacts({ machines: [ami], pods: [pod('web-1', 'ip-b')] }))
  assert.match(
    stepOf(w, 'drift')?.message ?? '',
    /reason AMIDrift .*runs ami-old; EC2NodeClass default status.amis now resolves to ami-new/,
  )
  assert.equal(w.outcome, 'going')
})

test('drift: labels that no longer satisfy the NodePool requirements (RequirementsDrifted)', () => {
  const np = pool()
  np.spec.template.spec.requirements = [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
  ]
  const { v } = one(nodeFacts({ machines: [machine('ip-a')], pools: [np], pods: [pod('web-1', 'ip-a')] }))
  assert.match(
    stepOf(v, 'drift')?.message ?? '',
    /RequirementsDrifted.*karpenter.sh\/capacity-type In spot \(the node has karpenter.sh\/capacity-type=on-demand\)/,
  )
})

test('expiration: when it falls, and past it Karpenter deletes it whatever blocks', () => {
  const later = one(
    nodeFacts({
      machines: [machine('ip-a', { expireAfter: '24h', createdMinutesAgo: 60 })],
      pods: [pod('web-1', 'ip-a')],
    }),
  )
  assert.equal(stepOf(later.v, 'expiration')?.applies, 'later')
  assert.equal(stepOf(later.v, 'expiration')?.at, '2026-12-05T11:00:00Z (in 23h)')
  const due = machine('ip-a', {
    expireAfter: '1h',
    createdMinutesAgo: 120,
    nodeAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' },
  })
  const { v } = one(nodeFacts({ machines: [due], pods: [pod('web-1', 'ip-a')] }))
  assert.equal(v.outcome, 'going', 'do-not-disrupt does not hold expiration back')
  assert.match(v.headline, /expired at .*without budgets or do-not-disrupt/)
})

test('blockers: do-not-disrupt on the node and on a pod, each with the command that lets it go', () => {
  const m = machine('ip-a', { nodeAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' } })
  const { r, v } = one(
    nodeFacts({
      machines: [m],
      pools: [pool({ hash: '999' })],
      pods: [pod('batch-1', 'ip-a', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })],
    }),
  )
  assert.equal(v.outcome, 'blocked')
  assert.deepEqual(
    v.blockers.map((b) => [b.kind, b.fix?.commands?.[0]]),
    [
      ['node-annotation', 'kubectl annotate node ip-a karpenter.sh/do-not-disrupt-'],
      ['pod-annotation', 'kubectl -n shop annotate pod batch-1 karpenter.sh/do-not-disrupt-'],
    ],
  )
  assert.equal(nodeExitCode(r), 1)
})

test('a PDB that allows no eviction: named with its selector and numbers (kubernetes-sigs/karpenter#2802)', () => {
  const m = machine('ip-a')
  const { v } = one(
    nodeFacts({
      machines: [m, machine('ip-b')],
      pods: [pod('web-1', 'ip-a'), pod('web-2', 'ip-a')],
      pdbs: [pdb('web', 0)],
      selector: { kind: 'node', name: 'ip-a' },
    }),
  )
  assert.equal(v.outcome, 'blocked')
  assert.equal(v.blockers.length, 1, 'one PDB over two pods is said once')
  assert.match(
    v.blockers[0]?.message ?? '',
    /PodDisruptionBudget shop\/web \(selector app=web, minAvailable 2; 2 healthy of 2, 2 needed\) allows 0 disruptions/,
  )
  assert.match(v.blockers[0]?.fix?.commands?.[0] ?? '', /kubectl -n shop patch pdb web/)
})

test('a PDB with no status (no disruption controller computed it) blocks, as Karpenter reads it as 0', () => {
  // sigs.k8s.io/karpenter pkg/utils/pdb: disruptionsAllowed is Go's int32, 0 when the status is empty.
  const { status: _unset, ...bare } = pdb('web', 0)
  const { v } = one(
    nodeFacts({
      machines: [machine('ip-a'), machine('ip-b')],
      pods: [pod('web-1', 'ip-a')],
      pdbs: [bare],
      selector: { kind: 'node', name: 'ip-a' },
    }),
  )
  assert.equal(v.outcome, 'blocked')
  assert.match(
    v.blockers[0]?.message ?? '',
    /PodDisruptionBudget shop\/web .*allows 0 disruptions \(its status was not computed/,
  )
})

test('a new PDB as the API server writes it (zeros, no observedGeneration) is said not computed; a computed 0 is not', () => {
  const fresh = pdb('web', 0)
  fresh.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }
  const judge = (b: ReturnType<typeof pdb>) =>
    one(
      nodeFacts({
        machines: [machine('ip-a'), machine('ip-b')],
        pods: [pod('web-1', 'ip-a')],
        pdbs: [b],
        selector: { kind: 'node', name: 'ip-a' },
      }),
    ).v.blockers[0]?.message ?? ''
  // Seen on the bed: Karpenter v1.14.1 says "Pdb prevents pod evictions (PodDisruptionBudget=[default/d-pdb])".
  assert.match(judge(fresh), /0 healthy of 0, 0 needed\) allows 0 disruptions \(its status was not computed/)
  const stale = pdb('web', 0)
  stale.metadata.generation = 2
  assert.match(judge(stale), /not computed for this spec/)
  assert.doesNotMatch(judge(pdb('web', 0)), /not computed/)
})

test('a PDB at 0 with unhealthyPodEvictionPolicy AlwaysAllow does not hold a pod that is not Ready', () => {
  const b = pdb('web', 0)
  b.spec.unhealthyPodEvictionPolicy = 'AlwaysAllow'
  const sick = pod('web-1', 'ip-a')
  sick.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] }
  const facts = (pods: ReturnType<typeof pod>[]) =>
    one(
      nodeFacts({
        machines: [machine('ip-a'), machine('ip-b')],
        pods,
        pdbs: [b],
        selector: { kind: 'node', name: 'ip-a' },
      }),
    ).v
  assert.equal(facts([sick]).blockers.filter((x) => x.kind === 'pdb').length, 0)
  assert.equal(
    facts([pod('web-2', 'ip-a')]).blockers.filter((x) => x.kind === 'pdb').length,
    1,
    'a Ready pod is still held',
  )
})

test('terminationGracePeriod: pod blockers do not hold drift back (eventual disruption)', () => {
  const m = machine('ip-a', { terminationGracePeriod: '1h' })
  const { v } = one(
    nodeFacts({
      machines: [m],
      pools: [pool({ hash: '999' })],
      pods: [pod('web-1', 'ip-a')],
      pdbs: [pdb('web', 0)],
    }),
  )
  assert.equal(v.outcome, 'going')
  assert.equal(v.blockers[0]?.passedByGracePeriod, true)
})

test('a NodePool budget at 0 now: its schedule, reasons, when the window closes, the patch', () => {
  const np = pool({
    hash: '999',
    disruption: {
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '1m',
      budgets: [
        { nodes: '10%' },
        { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h', reasons: ['Drifted'] },
      ],
    },
  })
  const { r, v } = one(nodeFacts({ machines: [machine('ip-a')], pools: [np], pods: [pod('web-1', 'ip-a')] }))
  assert.equal(v.outcome, 'blocked')
  const b = v.blockers.find((x) => x.kind === 'budget')
  assert.match(
    b?.message ?? '',
    /NodePool default spec.disruption.budgets\[1\] \(nodes "0", schedule "0 9 \* \* mon-fri" for 8h, reasons Drifted\) blocks Drifted: it allows 0 of 1 nodes now; this window closes at 2026-12-04T17:00:00Z \(in 5h\)/,
  )
  assert.match(b?.fix?.commands?.[0] ?? '', /"path":"\/spec\/disruption\/budgets\/1\/nodes","value":"1"/)
  assert.deepEqual(
    r.budgets.find((x) => x.reason === 'Drifted'),
    { nodePool: 'default', reason: 'Drifted', allowed: 0, nodes: 1, disrupting: 0 },
  )
})

test('nominated for a pending pod, and not initialized: Karpenter keeps the node', () => {
  const m = machine('ip-a', {
    conditions: [
      { type: 'Launched', status: 'True' },
      { type: 'Registered', status: 'True' },
      { type: 'Initialized', status: 'Unknown' },
    ],
  })
  const pending = {
    ...pod('web-9', ''),
    spec: { containers: [] },
    status: { phase: 'Pending', nominatedNodeName: 'ip-a' },
  }
  const { v } = one(nodeFacts({ machines: [m], pools: [pool({ hash: '999' })], pods: [pending] }))
  assert.deepEqual(
    v.blockers.map((b) => b.kind),
    ['not-initialized', 'nominated'],
  )
  assert.equal(v.outcome, 'blocked')
})

test('launched, never registered: the 15-minute timeout and doctor not collected said so (aws/karpenter-provider-aws#7251)', () => {
  const m = machine('ip-a', {
    conditions: [
      { type: 'Launched', status: 'True', lastTransitionTime: ago(20) },
      { type: 'Registered', status: 'Unknown', lastTransitionTime: ago(20) },
    ],
  })
  const { r, v } = one(
    nodeFacts({ machines: [{ claim: m.claim }], selector: { kind: 'nodeclaim', name: 'default-ip-a' } }),
  )
  assert.equal(v.outcome, 'not-joined')
  assert.match(
    v.headline,
    /never registered; the 15m registration timeout passed at 2026-12-04T11:55:00Z \(5m ago\): Karpenter deletes it/,
  )
  assert.deepEqual(
    v.join?.map((j) => [j.source, j.status]),
    [
      ['doctor', 'unknown'],
      ['user-data', 'unknown'],
      ['boot-log', 'unknown'],
    ],
  )
  assert.equal(nodeExitCode(r), 1)
})

test('launch failed: the error mapped to doctor checks, an encoded denial gets the decode command', () => {
  const m = machine('ip-a', {
    conditions: [
      {
        type: 'Launched',
        status: 'False',
        reason: 'LaunchFailed',
        message:
          'creating instance, UnauthorizedOperation: You are not authorized to perform this operation. Encoded authorization failure message: AbC-123',
        lastTransitionTime: ago(1),
      },
    ],
  })
  const { v } = one(
    nodeFacts({ machines: [{ claim: m.claim }], selector: { kind: 'nodeclaim', name: 'default-ip-a' } }),
  )
  assert.equal(v.outcome, 'launch-failed')
  assert.match(v.join?.[0]?.message ?? '', /the controller role may not make the call/)
  assert.equal(
    v.join?.[1]?.fix?.commands?.[0],
    'aws sts decode-authorization-message --encoded-message AbC-123 --query DecodedMessage --output text',
  )
  assert.match(v.join?.[2]?.message ?? '', /controller-policy|passrole-node-role/)
})

test('leaving and gone: why it went, from Karpenter events (drift and which reason)', () => {
  const m = machine('ip-a', { deleting: true })
  const { v } = one(
    nodeFacts({
      machines: [m],
      events: [event('Node', 'ip-a', 'DisruptionTerminating', 'Disrupting Node: Drifted')],
      selector: { kind: 'node', name: 'ip-a' },
    }),
  )
  assert.equal(v.outcome, 'leaving')
  assert.match(v.headline, /disrupted by Karpenter for Drifted at 2026-12-04T11:55:00.000Z/)
  const gone = one(
    nodeFacts({
      events: [
        event('Node', 'ip-z', 'SpotInterrupted', 'Spot interruption warning was triggered for the node'),
      ],
      selector: { kind: 'node', name: 'ip-z' },
    }),
  )
  assert.equal(gone.v.outcome, 'gone')
  assert.match(gone.v.headline, /interrupted: SpotInterrupted/)
  const unknown = one(nodeFacts({ selector: { kind: 'node', name: 'ip-q' } }))
  assert.equal(unknown.v.outcome, 'could-not-tell')
  assert.equal(nodeExitCode(unknown.r), 2)
})

test('--nodes -l: only matching nodes are judged, all are counted; order puts the ones that need a hand first', () => {
  const a = machine('ip-a', { nodeAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' } })
  const b = machine('ip-b', { pool: 'batch' })
  const f = nodeFacts({
    machines: [b, a],
    pools: [pool(), pool({ name: 'batch' })],
    pods: [pod('web-1', 'ip-a'), pod('web-2', 'ip-b')],
  })
  const all = judgeNodes(f, 'snapshot', NOW)
  assert.deepEqual(
    all.nodes.map((n) => [n.name, n.outcome]),
    [
      ['ip-b', 'going'],
      ['ip-a', 'blocked'],
    ],
  )
  const only = judgeNodes(
    { ...f, meta: { ...f.meta, selector: { kind: 'nodes', labelSelector: 'karpenter.sh/nodepool=batch' } } },
    'snapshot',
    NOW,
  )
  assert.deepEqual(
    only.nodes.map((n) => n.name),
    ['ip-b'],
  )
})

test('a node asked about while the NodeClaims read failed: could not tell, naming the read — never "gone" or "no such NodeClaim"', () => {
  // Seen on the bed under load (test/e2e/why-node.e2e.test.ts): a claim that existed was reported as
  // absent because its list read had failed.
  const m = machine('c')
  const f = nodeFacts({ machines: [{ claim: m.claim }], selector: { kind: 'nodeclaim', name: 'default-c' } })
  f.nodeClaims = {
    ok: false,
    error: {
      code: 'ETIMEDOUT',
      kind: 'network',
      read: 'kubernetes: NodeClaims',
      message: 'timed out after 10s',
    },
  }
  f.events = {
    ok: true,
    value: [event('NodeClaim', 'default-c', 'DisruptionTerminating', 'Disrupting NodeClaim: Empty')],
  }
  const { r, v } = one(f)
  assert.equal(v.outcome, 'could-not-tell')
  assert.equal(v.headline, 'could not tell: kubernetes: NodeClaims: timed out after 10s')
  assert.equal(nodeExitCode(r), 2)
})

test('Karpenter’s log lines about the node ride beside the verdict (Node and NodeClaim names merged); an unread log is said', () => {
  const m = machine('ip-a')
  const f = nodeFacts({ machines: [m], selector: { kind: 'node', name: 'ip-a' } })
  const line = {
    time: '2026-12-04T11:59:00Z',
    level: 'INFO',
    message: 'disrupting node(s)',
    detail: 'Empty/1: delete',
  }
  f.controllerLog = { ok: true, value: { 'default-ip-a': [line], 'ip-a': [line] } }
  const { r, v } = one(f)
  assert.deepEqual(v.karpenter.log, [line])
  assert.equal(r.controllerLogUnread, undefined)
  f.controllerLog = {
    ok: false,
    error: {
      code: 'NotFound',
      kind: 'error',
      read: 'kubernetes: controller log',
      message: 'no controller pod is Running',
    },
  }
  const unread = one(f)
  assert.equal(unread.v.karpenter.log, undefined)
  assert.equal(unread.r.controllerLogUnread, 'no controller pod is Running')
})
