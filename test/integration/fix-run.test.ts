// doctor --fix's use case (runFix) on the wire: it builds its own clients, so the cluster is the nock
// mock of `demo` (test/helpers/mock-cluster.ts). What it shows (the plan, the manual findings and their
// commands), when it stops (nothing to fix, no confirmation, --dry-run, a "no"), what it applies, how
// it waits for Karpenter to re-resolve what was fixed (a virtual clock: each sleep moves it at once, so
// no test really waits), and that the judgement after comes from a fresh read.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { Aws } from '../../src/context/aws.js'
import { interrupt } from '../../src/context/interrupt.js'
import type { Prompter } from '../../src/context/prompter.js'
import { runFix, type FixOutcome, type FixRequest } from '../../src/fix/run.js'
import { DISCOVERY_TAG } from '../../src/plan/resources/discovery-tags.js'
import { CLUSTER } from '../helpers/facts.js'
import { fixturePath } from '../helpers/fixtures.js'
import {
  CALLER_ARN,
  defaultReleaseValues,
  helmReleaseSecret,
  startMockCluster,
  type MockState,
} from '../helpers/mock-cluster.js'

const TITLE = 'karpctl doctor --fix — cluster demo (us-west-2, account 123456789012)'
const NOTHING = 'Nothing doctor found can be fixed automatically.'
const WAIT = 'EC2NodeClass default Ready'

const ready = (s: MockState, status: 'True' | 'False') => {
  s.kube.nodeClasses[0]!.status = {
    conditions: [{ type: 'Ready', status, ...(status === 'False' ? { reason: 'SubnetsNotFound' } : {}) }],
  }
}
/** The subnets lost their discovery tag (an automatic fix) and Karpenter says the class is not Ready. */
const untagged = (s: MockState) => {
  for (const sub of s.subnets) delete sub.tags[DISCOVERY_TAG]
  ready(s, 'False')
}
/** The EC2NodeClass names an instance profile that holds no role: manual, with an alternative. */
const emptyProfile = (s: MockState) => {
  const nc = s.kube.nodeClasses[0]!
  const { role: _role, ...spec } = nc.spec as Record<string, unknown>
  nc.spec = { ...spec, instanceProfile: 'empty-profile' }
  s.instanceProfiles['empty-profile'] = { roles: [] }
}

const PLAN = [
  TITLE,
  "kube context: demo (https://example.gr7.us-west-2.eks.amazonaws.com: the cluster's endpoint)",
  '',
  'fix: discovery-tags',
  '  ~ update    discovery tags karpenter.sh/discovery=demo',
  '        subnet-0a karpenter.sh/discovery: (not set) → demo',
  '        subnet-0b karpenter.sh/discovery: (not set) → demo',
  '        subnet-0c karpenter.sh/discovery: (not set) → demo',
  '        note: recorded on each resource as karpctl.io/repaired-tags (a repair: teardown keeps it)',
  '',
  'Plan: 0 to create, 1 to update, 0 unchanged.',
]
const NOT_READY_MANUAL = [
  '  nodeclass-ready: EC2NodeClass default is not Ready: Ready=False (SubnetsNotFound)',
  '    why: needs a human decision',
  '    $ kubectl get ec2nodeclass default -o yaml',
  '    $ kubectl -n kube-system logs deploy/karpenter -c controller | grep default',
]
const manualHeader = (n: number) => ['', `Manual (${n}): karpctl does not change these for you`]

/**
 * The mock cluster, a virtual clock for the waits (Date.now moves only when interrupt.sleep is asked
 * to sleep, by what it was asked), and a record of what runFix said, reported, asked and released.
 */
function setup(
  t: TestContext,
  mutate: (s: MockState) => void,
  hooks: { afterSleep?: (s: MockState, n: number) => void; onSay?: (s: MockState) => void } = {},
) {
  const m = startMockCluster({ expectations: false, releasesByNamespace: true, mutate })
  t.after(() => m.stop())
  let clock = Date.now()
  const slept: number[] = []
  t.mock.method(Date, 'now', () => clock)
  t.mock.method(interrupt, 'sleep', async (ms: number) => {
    slept.push(ms)
    clock += ms
    hooks.afterSleep?.(m.state, slept.length)
  })
  // Which clients were released, by their retry mode (the writing one is adaptive).
  const destroy = Aws.prototype.destroy
  const released: (string | undefined)[] = []
  t.mock.method(Aws.prototype, 'destroy', function (this: Aws) {
    released.push(this.options.retryMode)
    destroy.call(this)
  })
  const said: string[] = []
  const progress: string[] = []
  const asked: string[] = []
  const prompter = (answer: boolean): Prompter => ({
    select: () => Promise.reject(new Error('not asked')),
    checkbox: () => Promise.reject(new Error('not asked')),
    input: () => Promise.reject(new Error('not asked')),
    confirm: async (q) => {
      asked.push(`${q.message} (default ${q.default})`)
      return answer
    },
  })
  const run = (req: Partial<FixRequest> = {}): Promise<FixOutcome> =>
    runFix({
      live: m.runOptions({ maxAttempts: 1 }),
      yes: false,
      dryRun: false,
      prompter: null,
      color: false,
      say: (s) => {
        said.push(s)
        hooks.onSay?.(m.state)
      },
      progress: (s) => progress.push(s),
      ...req,
    })
  const wrote = () => m.calls().filter((c) => c.op === 'ec2:CreateTags').length
  return { m, run, said, progress, asked, slept, released, prompter, wrote }
}

const statuses = (out: FixOutcome, id: string) =>
  out.results.find((r) => r.meta.id === id)?.findings.map((f) => f.status)
const nodeClassReady = (out: FixOutcome) =>
  out.facts.kube.nodeClasses.ok ? out.facts.kube.nodeClasses.value[0]?.status?.conditions?.[0]?.status : '?'
/** The preflight's line: the test caller is a user IAM's simulator (the mock) does not know. */
const PREFLIGHT = `preflight: IAM's policy simulator is unavailable (NoSuchEntityException: The role ${CALLER_ARN} cannot be found.); permissions could not be checked before applying`

test('a healthy cluster: nothing to fix is said, nothing is asked or written, the writing client is released', async (t) => {
  const s = setup(t, () => {})
  const out = await s.run()
  assert.equal(out.plan.title, TITLE)
  assert.deepEqual(out.plan.steps, [])
  assert.deepEqual(out.manual, [])
  assert.deepEqual(out.outcome, { kind: 'nothing' })
  assert.deepEqual(s.said, [NOTHING])
  assert.equal(out.rendered, '')
  assert.equal(out.writes, 0)
  assert.deepEqual(s.progress, [])
  assert.deepEqual(s.released, ['adaptive'])
  assert.deepEqual(statuses(out, 'discovery-tags'), ['pass', 'pass'])
})

test('only manual findings: the Manual section lists each with its why, its commands and the alternative', async (t) => {
  const s = setup(t, (x) => {
    emptyProfile(x)
    ready(x, 'False')
  })
  const out = await s.run()
  assert.deepEqual(
    out.manual.map((x) => x.check),
    ['node-role', 'nodeclass-ready'],
  )
  const patch = `'{"spec":{"role":"KarpenterNodeRole-demo","instanceProfile":null}}'`
  assert.deepEqual(s.said, [
    [
      NOTHING,
      ...manualHeader(2),
      '  node-role: instance profile empty-profile used by EC2NodeClass/default holds no role: Karpenter cannot launch nodes with it (an instance without a role gets no credentials and never joins)',
      '    why: which role an instance profile holds is a choice (the role printed is a guess: one another EC2NodeClass uses, else the one install creates), and so is setting spec.role instead',
      '    $ aws iam add-role-to-instance-profile --instance-profile-name empty-profile --role-name KarpenterNodeRole-demo',
      '    or, or let Karpenter manage the instance profile: set spec.role of EC2NodeClass/default (removing spec.instanceProfile):',
      `    $ kubectl patch ec2nodeclass default --type merge -p ${patch}`,
      ...NOT_READY_MANUAL,
    ].join('\n'),
  ])
  assert.deepEqual(out.outcome, { kind: 'nothing' })
  assert.equal(s.wrote(), 0)
})

test('a change without --yes, a terminal or --dry-run: needs confirmation, with the plan unsaid, no caller read, no write', async (t) => {
  const s = setup(t, untagged)
  const out = await s.run()
  assert.deepEqual(out.outcome, { kind: 'needs-confirmation' })
  assert.equal(out.rendered, [...PLAN, ...manualHeader(1), ...NOT_READY_MANUAL].join('\n'))
  assert.deepEqual(s.said, [])
  assert.equal(out.writes, 0)
  assert.equal(s.wrote(), 0)
  // The one GetCallerIdentity is the collector's (memoized): the caller's ARN for the preflight was not asked.
  assert.equal(s.m.count('sts:GetCallerIdentity'), 1)
  assert.deepEqual(
    out.plan.steps.map((x) => [x.address, x.action]),
    [['ec2-tags.discovery', 'update']],
  )
  assert.deepEqual(statuses(out, 'discovery-tags'), ['fail', 'pass'])
  assert.deepEqual(s.released, ['adaptive'])
})

test('--only and --skip choose the checks judged, fixed and listed', async (t) => {
  const s = setup(t, (x) => {
    untagged(x)
    emptyProfile(x)
  })
  const only = await s.run({ only: ['node-role'] })
  assert.deepEqual(
    only.results.map((r) => r.meta.id),
    ['node-role'],
  )
  assert.deepEqual(only.plan.steps, [])
  assert.deepEqual(
    only.manual.map((x) => x.check),
    ['node-role'],
  )
  const skip = await s.run({ skip: ['discovery-tags', 'node-role'] })
  const ids = skip.results.map((r) => r.meta.id)
  assert.ok(!ids.includes('discovery-tags') && !ids.includes('node-role') && ids.includes('nodeclass-ready'))
  assert.deepEqual(skip.plan.steps, [])
  assert.deepEqual(
    skip.manual.map((x) => x.check),
    ['nodeclass-ready'],
  )
  assert.equal(s.wrote(), 0)
})

test('--dry-run: the plan is said (in color when asked), nothing applied, nothing waited for', async (t) => {
  const s = setup(t, untagged)
  const out = await s.run({ dryRun: true, color: true })
  assert.deepEqual(out.outcome, { kind: 'dry-run' })
  assert.equal(s.said.length, 1)
  assert.ok(s.said[0]!.includes('\u001b['), s.said[0])
  assert.equal(out.rendered, '')
  assert.equal(out.writes, 0)
  assert.equal(s.wrote(), 0)
  assert.deepEqual(s.progress, [])
  assert.deepEqual(s.slept, [])
})

test('a "no" at the prompt: asked once how many fixes, nothing applied', async (t) => {
  const s = setup(t, untagged)
  const out = await s.run({ prompter: s.prompter(false) })
  assert.deepEqual(out.outcome, { kind: 'declined' })
  assert.deepEqual(s.asked, ['Apply 1 fix(es) to cluster demo? (default false)'])
  assert.deepEqual(s.said, [[...PLAN, ...manualHeader(1), ...NOT_READY_MANUAL].join('\n')])
  assert.equal(out.rendered, '')
  assert.equal(out.writes, 0)
  assert.equal(s.wrote(), 0)
  assert.deepEqual(statuses(out, 'discovery-tags'), ['fail', 'pass'])
})

test('--yes: the tags are written once, the class gets Ready after one poll, and the judgement after is a fresh read', async (t) => {
  const s = setup(t, untagged, { afterSleep: (x) => ready(x, 'True') })
  const out = await s.run({ yes: true })
  assert.equal(out.outcome.kind, 'applied')
  assert.deepEqual(s.said, [[...PLAN, ...manualHeader(1), ...NOT_READY_MANUAL].join('\n'), PREFLIGHT])
  assert.deepEqual(s.progress, [
    '✔ updated discovery tags karpenter.sh/discovery=demo (0.0 s)',
    `✔ ${WAIT} (2.0 s)`,
  ])
  assert.deepEqual(s.slept, [2000])
  assert.equal(out.writes, 1)
  assert.equal(s.wrote(), 1)
  assert.equal(out.rendered, '')
  // The plan and the manual list are the ones shown before the apply.
  assert.equal(out.plan.steps[0]?.action, 'update')
  assert.deepEqual(
    out.manual.map((x) => x.check),
    ['nodeclass-ready'],
  )
  // After: read again, the tags are there and the class is Ready.
  assert.deepEqual(statuses(out, 'discovery-tags'), ['pass', 'pass'])
  assert.deepEqual(statuses(out, 'nodeclass-ready'), ['pass', 'pass'])
  assert.equal(nodeClassReady(out), 'True')
  assert.deepEqual(
    s.m.state.subnets.filter((x) => x.tags[DISCOVERY_TAG] === CLUSTER).map((x) => x.id),
    ['subnet-0a', 'subnet-0b', 'subnet-0c'],
  )
  // Both clients released: the writing one (adaptive retries) and the fresh read's.
  assert.deepEqual(s.released, [undefined, 'adaptive'])
})

test('a "yes" at the prompt, the class Ready at the first poll: its line has no time', async (t) => {
  // Karpenter re-resolved the class while the plan was being shown.
  const s = setup(t, untagged, { onSay: (x) => ready(x, 'True') })
  const out = await s.run({ prompter: s.prompter(true) })
  assert.equal(out.outcome.kind, 'applied')
  assert.deepEqual(s.asked, ['Apply 1 fix(es) to cluster demo? (default false)'])
  assert.deepEqual(s.progress.slice(1), [`✔ ${WAIT}`])
  assert.deepEqual(s.slept, [])
  assert.equal(out.writes, 1)
})

test('a class that does not get Ready within --wait: said as not yet, after the given seconds; judged not Ready again', async (t) => {
  const s = setup(t, untagged)
  const out = await s.run({ yes: true, waitMs: 4000 })
  assert.deepEqual(s.progress.slice(1), [`! ${WAIT}: not yet after 4 s (doctor says why)`])
  assert.deepEqual(s.slept, [2000, 2000])
  assert.deepEqual(statuses(out, 'discovery-tags'), ['pass', 'pass'])
  assert.deepEqual(statuses(out, 'nodeclass-ready'), ['fail', 'pass'])
  assert.equal(nodeClassReady(out), 'False')
})

test('the wait is 120 s by default', async (t) => {
  const s = setup(t, untagged)
  await s.run({ yes: true })
  assert.deepEqual(s.progress.slice(1), [`! ${WAIT}: not yet after 120 s (doctor says why)`])
  assert.equal(s.slept.length, 60)
})

/** A toleration value that is a boolean in the release's values: repaired by a new Helm revision. */
const boolToleration = (x: MockState) => {
  untagged(x)
  const values = {
    ...defaultReleaseValues(),
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: true, effect: 'NoSchedule' }],
  }
  x.kube.helmSecrets = x.kube.helmSecrets.map((o) =>
    o.metadata.name.startsWith('sh.helm.release.v1.karpenter.') ? helmReleaseSecret({ values }) : o,
  )
}

test('a Helm repair without helm: refused before any write', async (t) => {
  const s = setup(t, boolToleration)
  const saved = process.env.KARPCTL_HELM
  process.env.KARPCTL_HELM = '/nonexistent/helm'
  t.after(() => (saved === undefined ? delete process.env.KARPCTL_HELM : (process.env.KARPCTL_HELM = saved)))
  await assert.rejects(s.run({ yes: true }), { code: 'HELM_MISSING' })
  assert.equal(s.wrote(), 0)
})

test('--chart-dir is the Helm repair’s chart: a folder of another version blocks the plan', async (t) => {
  const s = setup(t, boolToleration)
  await assert.rejects(s.run({ dryRun: true, chartDir: fixturePath('v1.0.14/charts') }), {
    message: /--chart-dir holds karpenter 1\.0\.14 but the release runs 1\.14\.1/,
  })
  assert.equal(s.wrote(), 0)
})
