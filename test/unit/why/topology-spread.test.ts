import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeNode } from '../../../src/facts/types.js'
import { judge, type PodVerdict } from '../../../src/why/judge.js'
import { selects } from '../../../src/why/selector.js'
import type { PlacedPod, TopologySpreadConstraint, WhyFacts } from '../../../src/why/types.js'
import { exitCodeOf } from '../../../src/why/why.js'
import { pendingPod, pools, whyFacts } from '../../helpers/why.js'

const ZONE = 'topology.kubernetes.io/zone'
const spread = (over: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  topologyKey: ZONE,
  whenUnsatisfiable: 'DoNotSchedule',
  maxSkew: 1,
  labelSelector: { matchLabels: { app: 'web' } },
  ...over,
})
const node = (name: string, zone: string): KubeNode => ({
  name,
  labels: { [ZONE]: zone },
  taints: [],
  ready: true,
  karpenter: true,
})
const placed = (nodeName: string, n: number, labels = { app: 'web' }): PlacedPod[] =>
  Array.from({ length: n }, () => ({ namespace: 'shop', nodeName, labels }))

/** Two web pods already in us-west-2a, none in us-west-2b. */
function facts(
  constraints: TopologySpreadConstraint[],
  mutate?: (f: WhyFacts) => void,
  extra: PlacedPod[] = [],
) {
  return whyFacts([pendingPod({ topologySpreadConstraints: constraints })], (f) => {
    f.kube.nodes = { ok: true, value: [node('node-a', 'us-west-2a'), node('node-b', 'us-west-2b')] }
    f.placedPods = {
      ok: true,
      value: [...placed('node-a', 2), ...placed('node-b', 3, { app: 'other' }), ...extra],
    }
    mutate?.(f)
  })
}
const verdict = (f: WhyFacts) => {
  const r = judge(f, 'snapshot', new Date(0))
  return { r, v: (r.groups[0] as PodVerdict).nodePools[0]! }
}
const onlyZoneA = (f: WhyFacts) =>
  pools(f)[0]!.spec.template.spec.requirements!.push({ key: ZONE, operator: 'In', values: ['us-west-2a'] })

test('label selectors as Kubernetes matches them', () => {
  const labels = { app: 'web', tier: 'front' }
  assert.equal(selects({ matchLabels: { app: 'web' } }, labels), true)
  assert.equal(selects({ matchLabels: { app: 'api' } }, labels), false)
  assert.equal(
    selects({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }] }, labels),
    true,
  )
  assert.equal(
    selects({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, labels),
    false,
  )
  assert.equal(selects({ matchExpressions: [{ key: 'x', operator: 'NotIn', values: ['a'] }] }, labels), true)
  assert.equal(selects({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, labels), true)
  assert.equal(selects({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, labels), false)
  assert.equal(selects({}, labels), true)
  assert.equal(selects(undefined, labels), false)
})

test('a NodePool with the emptiest zone fits, narrowed to that zone', () => {
  const { v, r } = verdict(facts([spread()]))
  assert.equal(v.status, 'fits')
  assert.equal(exitCodeOf(r), 0)
  // The only arm64 type, c6g.large, is offered in us-west-2a alone: the spread leaves it no zone.
  const arm = facts([spread()], (f) => {
    for (const p of f.pods.ok ? f.pods.value : []) p.spec.nodeSelector = { 'kubernetes.io/arch': 'arm64' }
    // The placed pods' nodes are arm64 too: only nodes that meet the pod's nodeSelector are counted
    // (nodeAffinityPolicy Honor, the default).
    for (const n of f.kube.nodes.ok ? f.kube.nodes.value : []) n.labels['kubernetes.io/arch'] = 'arm64'
  })
  assert.equal(
    verdict(whyFacts([pendingPod({ nodeSelector: { 'kubernetes.io/arch': 'arm64' } })])).v.status,
    'fits',
  )
  const narrowed = verdict(arm).v
  assert.equal(narrowed.status, 'ruled-out')
  assert.equal(narrowed.rule, 'instance-types')
})

test('a NodePool that can launch only in the fullest zone: ruled out, with the counts on both sides and the zone to allow', () => {
  const { v, r } = verdict(facts([spread()], onlyZoneA))
  assert.equal(v.status, 'ruled-out')
  assert.equal(v.rule, 'topology-spread')
  assert.equal(
    v.message,
    'topology spread on topology.kubernetes.io/zone (maxSkew 1, DoNotSchedule): the zones NodePool default can launch in hold us-west-2a 2 pods matching app=web, the emptiest zone (us-west-2b) holds 0: one more would make the skew 3 > 1',
  )
  assert.equal(
    v.fix?.summary,
    "let NodePool default launch in us-west-2b (spec.template.spec.requirements[1]), or raise maxSkew above 1 / set whenUnsatisfiable: ScheduleAnyway on the pod's constraint",
  )
  assert.deepEqual(v.fix?.commands, [
    `kubectl patch nodepool default --type json -p '[{"op":"replace","path":"/spec/template/spec/requirements/1/values","value":["us-west-2a","us-west-2b"]}]'`,
  ])
  assert.equal(exitCodeOf(r), 1)
})

test('the skew is counted as Kubernetes does: maxSkew, pods not selected, the pod itself, minDomains', () => {
  // maxSkew 3 leaves room in the fuller zone.
  assert.equal(verdict(facts([spread({ maxSkew: 3 })], onlyZoneA)).v.status, 'fits')
  // A pod its own selector does not match does not count itself: 2 - 0 = 2 > 1 still.
  const other = facts([spread({ labelSelector: { matchLabels: { app: 'other' } } })], onlyZoneA)
  // us-west-2b holds 3 `other` pods, us-west-2a none: the zone A NodePool is the emptiest.
  assert.equal(verdict(other).v.status, 'fits')
  // A zone with a node and no pods lowers the minimum: us-west-2b with 1 pod, us-west-2c empty.
  const withC = facts(
    [spread()],
    (f) => {
      pools(f)[0]!.spec.template.spec.requirements!.push({
        key: ZONE,
        operator: 'In',
        values: ['us-west-2b'],
      })
      if (f.kube.nodes.ok) f.kube.nodes.value.push(node('node-c', 'us-west-2c'))
    },
    placed('node-b', 1),
  )
  assert.equal(verdict(withC).v.rule, 'topology-spread')
  // minDomains above the zones there are: the minimum counts as 0, the pod must go where the count is 0.
  const min = facts([spread({ minDomains: 3 })], (f) => {
    if (f.placedPods?.ok) f.placedPods.value.push(...placed('node-b', 2))
  })
  assert.equal(verdict(min).v.rule, 'topology-spread')
})

test("the pod's own zone narrows the domains the minimum is taken over", () => {
  const f = facts([spread()], onlyZoneA)
  const pod = (f.pods.ok ? f.pods.value : [])[0]!
  pod.spec.nodeSelector = { [ZONE]: 'us-west-2a' }
  // Only us-west-2a is eligible: its own 2 is the minimum, 2 + 1 - 2 = 1 <= 1.
  assert.equal(verdict(f).v.status, 'fits')
})

test('ScheduleAnyway and other keys are not required zone spreads; without placed pods a fit is unknown', () => {
  assert.equal(verdict(facts([spread({ whenUnsatisfiable: 'ScheduleAnyway' })], onlyZoneA)).v.status, 'fits')
  assert.equal(
    verdict(facts([spread({ topologyKey: 'kubernetes.io/hostname' })], onlyZoneA)).v.status,
    'fits',
  )
  const old = facts([spread()], (f) => delete f.placedPods)
  const { v, r } = verdict(old)
  assert.equal(v.status, 'unknown')
  assert.match(
    v.message,
    /; topology spread not judged: the facts hold no placed pods \(saved by an older karpctl\)$/,
  )
  assert.equal(exitCodeOf(r), 2)
})
