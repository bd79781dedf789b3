import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { parse } from 'yaml'
import type { HelmUpgrade } from '../../../src/context/helm.js'
import type { HelmRelease } from '../../../src/facts/types.js'
import { planJson, renderPlan } from '../../../src/plan/render.js'
import {
  ADOPTED_FROM_REVISION,
  helmRelease,
  UPGRADED_TO,
  type ReleaseState,
} from '../../../src/plan/resources/helm-release.js'
import { ADOPTED_BY } from '../../../src/spec/ownership.js'
import type { ApplyEnv, Plan } from '../../../src/plan/types.js'

const LABELS = { 'karpctl.io/managed-by': 'karpctl' }
const SECRETS = ['hunter2', 'ghp_abcdefghijklmnopqrstuvwx1234', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY']

/** What a user's --values may hold: settings to show, and secrets never to show. */
const values = (over: Record<string, unknown> = {}) => ({
  settings: { clusterName: 'demo' },
  controller: { resources: { requests: { cpu: '500m' } } },
  webhook: { password: 'hunter2' },
  extraEnv: [{ name: 'AWS_SECRET_ACCESS_KEY', value: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }],
  gitToken: 'ghp_abcdefghijklmnopqrstuvwx1234',
  ...over,
})

const release = (v: Record<string, unknown>) =>
  helmRelease({
    address: 'helm.karpenter',
    release: 'karpenter',
    namespace: 'kube-system',
    chart: 'oci://public.ecr.aws/karpenter/karpenter',
    chartName: 'karpenter',
    version: '1.14.1',
    expectedVersion: '1.14.1',
    values: v,
    labels: LABELS,
    adopt: false,
    dependsOn: [],
  })

const installed = (v: Record<string, unknown>): ReleaseState => ({
  release: {
    name: 'karpenter',
    namespace: 'kube-system',
    revision: 3,
    status: 'deployed',
    chartName: 'karpenter',
    chartVersion: '1.14.1',
    values: v,
    computedValues: v,
  } as HelmRelease,
  labels: LABELS,
})

const planOf = (v: Record<string, unknown>, cur: ReleaseState | null): Plan => {
  const resource = release(v)
  return { title: 'T', steps: [{ resource, current: cur, verdict: resource.verdict(cur) }] }
}

/** Every form the plan is shown in: the human plan, with its documents, and --json. */
const everyForm = (plan: Plan) => [
  renderPlan(plan, { color: false }),
  renderPlan(plan, { color: false, showDocuments: true }),
  JSON.stringify(planJson(plan)),
]

test('install: every value key on its own line, the secrets redacted in every form the plan takes', () => {
  const plan = planOf(values(), null)
  const [human, documents, json] = everyForm(plan)
  assert.match(human!, /\n {8}values\.controller\.resources\.requests\.cpu: 500m\n/)
  assert.match(human!, /\n {8}values\.settings\.clusterName: demo\n/)
  assert.match(human!, /\n {8}values\.webhook\.password: \[REDACTED\]\n/)
  assert.match(human!, /\n {8}values\.extraEnv\.0: \{name: AWS_SECRET_ACCESS_KEY, value: \[REDACTED\]\}\n/)
  assert.match(documents!, /"password": "\[REDACTED\]"/)
  for (const text of [human, documents, json]) for (const s of SECRETS) assert.ok(!text!.includes(s), s)
  // --json: from and to always there, null when absent.
  assert.deepEqual(planJson(plan).steps[0]?.changes[0], {
    field: 'chart',
    from: null,
    to: 'karpenter-1.14.1',
  })
})

test('an upgrade shows each changed value key old → new, a dropped one as removed; a changed secret only as changed', () => {
  const before = values({ controller: { resources: { requests: { cpu: '1' } } }, logLevel: 'debug' })
  const after = values({ webhook: { password: 'swordfish' } })
  const plan = planOf(after, installed(before))
  const [human, documents, json] = everyForm(plan)
  assert.match(human!, /~ update {4}Helm release kube-system\/karpenter\n/)
  assert.match(human!, /\n {8}values\.controller\.resources\.requests\.cpu: 1 → 500m\n/)
  assert.match(human!, /\n {8}values\.logLevel: debug → \(removed\)\n/)
  assert.match(human!, /\n {8}values\.webhook\.password: \[REDACTED\] → \[REDACTED\]\n/)
  assert.doesNotMatch(human!, /values: differ/)
  for (const text of [human, documents, json])
    for (const s of [...SECRETS, 'swordfish']) assert.ok(!text!.includes(s), s)
  assert.deepEqual(
    planJson(plan).steps[0]?.changes.find((c) => c.field === 'values.logLevel'),
    { field: 'values.logLevel', from: 'debug', to: null },
  )
  // The same values again: nothing to show.
  assert.equal(release(after).verdict(installed(after)).action, 'unchanged')
})

test('helm receives the real values: redaction is only what the plan shows', async () => {
  const v = values()
  const seen: unknown[] = []
  const env = {
    helm: async () => ({
      upgradeInstall: async (u: HelmUpgrade) => seen.push(parse(readFileSync(u.valuesFiles[0]!, 'utf8'))),
    }),
  } as unknown as ApplyEnv
  const plan = planOf(v, null)
  renderPlan(plan, { color: false, showDocuments: true })
  planJson(plan)
  await release(v).apply(env, null)
  assert.deepEqual(seen, [v])
})

test('a doctor --fix repair: each value it sets old → new, its reason in the note', () => {
  const r = helmRelease({
    address: 'helm.karpenter.repair',
    release: 'karpenter',
    namespace: 'kube-system',
    chart: 'oci://public.ecr.aws/karpenter/karpenter',
    chartName: 'karpenter',
    expectedVersion: '1.14.1',
    values: { tolerations: [{ key: 'a', value: 'true' }] },
    labels: { 'karpctl.io/repaired': 'doctor-fix' },
    adopt: false,
    repair: 'sets tolerations',
    dependsOn: [],
  })
  const v = r.verdict({ ...installed({ tolerations: [{ key: 'a', value: true }] }), labels: {} })
  assert.deepEqual(v.changes, [{ field: 'values.tolerations.0.value', from: true, to: 'true' }])
  assert.match(v.note ?? '', /^sets tolerations: a new revision \(helm rollback undoes it\)/)
})

/** The release as a killed helm leaves it: its newest revision pending, no helm at it any more. */
const stuck = (status: string, lastDeployed?: number, helmRunning: number[] | null = []): ReleaseState => {
  const s = installed(values())
  return { ...s, release: { ...s.release, status, revision: 4 }, lastDeployed, helmRunning }
}

/** Applies `cur` with a helm that records each command, in order. */
async function commandsFor(cur: ReleaseState): Promise<string[]> {
  const calls: string[] = []
  const env = {
    helm: async () => ({
      upgradeInstall: async (u: HelmUpgrade) => void calls.push(`upgrade ${u.release}`),
      rollback: async (r: { release: string; revision: number; wait: boolean }) =>
        void calls.push(`rollback ${r.release} ${r.revision}${r.wait ? ' --wait' : ''}`),
      uninstall: async (r: string) => void calls.push(`uninstall ${r}`),
    }),
  } as unknown as ApplyEnv
  await release(values()).apply(env, cur)
  return calls
}

test('a pending upgrade of a release karpctl owns: planned as status → deployed, rolled back to the last deployed revision, then upgraded', async () => {
  const cur = stuck('pending-upgrade', 3)
  const v = release(values()).verdict(cur)
  assert.equal(v.blocked, undefined)
  assert.equal(v.action, 'update')
  assert.deepEqual(
    v.changes.filter((c) => c.field === 'status'),
    [{ field: 'status', from: 'pending-upgrade', to: 'deployed' }],
  )
  assert.match(
    v.note ?? '',
    /left pending-upgrade by a stopped helm: rolled back to revision 3 first, then upgraded/,
  )
  assert.deepEqual(await commandsFor(cur), ['rollback karpenter 3', 'upgrade karpenter'])
  // A stuck rollback goes back the same way.
  assert.deepEqual(await commandsFor(stuck('pending-rollback', 2)), [
    'rollback karpenter 2',
    'upgrade karpenter',
  ])
})

test('a pending first install is uninstalled, then installed', async () => {
  const cur = stuck('pending-install')
  const v = release(values()).verdict(cur)
  assert.equal(v.blocked, undefined)
  assert.match(v.note ?? '', /stopped first install: uninstalled first, then installed/)
  assert.deepEqual(await commandsFor(cur), ['uninstall karpenter', 'upgrade karpenter'])
})

test('a deployed release is upgraded with no recovery; a pending one with a helm still at it is left alone', async () => {
  assert.deepEqual(await commandsFor(installed({})), ['upgrade karpenter'])
  const busy = release(values()).verdict(stuck('pending-upgrade', 3, [4242]))
  assert.match(
    busy.blocked ?? '',
    /is pending-upgrade \(revision 4\): helm \(pid 4242\) is still at it; let it finish/,
  )
  const unknown = release(values()).verdict(stuck('pending-upgrade', 3, null))
  assert.match(unknown.blocked ?? '', /neither \/proc nor `ps` can tell whether a helm is still at it/)
  const nowhere = release(values()).verdict(stuck('pending-upgrade', undefined))
  assert.match(nowhere.blocked ?? '', /no deployed revision to go back to/)
})

test("a pending release karpctl does not own stays blocked as another tool's", () => {
  const cur = { ...stuck('pending-upgrade', 3), labels: {} }
  // Even with --adopt: the pending operation is the other tool's, not karpctl's to undo.
  const adopting = helmRelease({
    address: 'helm.karpenter',
    release: 'karpenter',
    namespace: 'kube-system',
    chart: 'oci://public.ecr.aws/karpenter/karpenter',
    chartName: 'karpenter',
    expectedVersion: '1.14.1',
    values: values(),
    labels: LABELS,
    adoptLabels: { 'karpctl.io/adopted-by': 'karpctl' },
    adopt: true,
    dependsOn: [],
  })
  assert.match(adopting.verdict(cur).blocked ?? '', /pending-upgrade by a helm run karpctl did not start/)
  // A revision karpctl's adoption made is karpctl's to recover.
  const mine = { ...cur, labels: { 'karpctl.io/adopted-by': 'karpctl' } }
  assert.equal(adopting.verdict(mine).blocked, undefined)
})

test("an upgrade of a release karpctl did not install: labelled as karpctl's upgrade, no rollback point (an earlier adoption's cleared); install's adoption keeps one", async () => {
  const UPGRADE_LABELS = { [ADOPTED_BY]: 'demo', [UPGRADED_TO]: '1.14.1' }
  const want = (upgradedTo?: string) =>
    helmRelease({
      address: 'helm.karpenter',
      release: 'karpenter',
      namespace: 'kube-system',
      chart: 'oci://public.ecr.aws/karpenter/karpenter',
      chartName: 'karpenter',
      expectedVersion: '1.14.1',
      values: values(),
      labels: upgradedTo ? UPGRADE_LABELS : LABELS,
      adoptLabels: { [ADOPTED_BY]: 'demo' },
      adopt: true,
      dependsOn: [],
      ...(upgradedTo ? { upgradedTo } : {}),
    })
  const labelsOf = async (r: ReturnType<typeof want>, cur: ReleaseState | null) => {
    let got: Record<string, string> | undefined
    const env = {
      helm: async () => ({ upgradeInstall: async (u: HelmUpgrade) => void (got = u.labels) }),
    } as unknown as ApplyEnv
    await r.apply(env, cur)
    return got
  }
  const theirs = (labels: Record<string, string>): ReleaseState => {
    const s = installed(values())
    return { ...s, release: { ...s.release, chartVersion: '1.0.14', revision: 5 }, labels }
  }
  // The getting-started install's release: its next revision is karpctl's upgrade, with no rollback point.
  assert.deepEqual(await labelsOf(want('1.14.1'), theirs({})), {
    ...UPGRADE_LABELS,
    [ADOPTED_FROM_REVISION]: 'null',
  })
  // One `install --adopt` took earlier (a rollback point on it): Helm would carry it on; "null" drops it.
  const adopted = theirs({ [ADOPTED_BY]: 'demo', [ADOPTED_FROM_REVISION]: '2' })
  assert.equal((await labelsOf(want('1.14.1'), adopted))?.[ADOPTED_FROM_REVISION], 'null')
  // A release the upgrade creates (karpenter-crd beside a getting-started install): its labels as they are.
  assert.deepEqual(await labelsOf(want('1.14.1'), null), UPGRADE_LABELS)
  assert.match(
    want('1.14.1').verdict(theirs({})).note ?? '',
    /installed without karpctl: upgraded as asked.*no rollback point.*teardown keeps it at 1\.14\.1, taking off karpctl's labels only/,
  )
  // install --adopt (no upgrade): the adoption and the revision teardown gives back.
  assert.deepEqual(await labelsOf(want(), theirs({})), { [ADOPTED_BY]: 'demo', [ADOPTED_FROM_REVISION]: '5' })
})

test('recovery rolls back without --wait (the upgrade right after rolls out anyway)', async () => {
  const calls: unknown[] = []
  const env = {
    helm: async () => ({
      upgradeInstall: async () => {},
      rollback: async (r: unknown) => void calls.push(r),
    }),
  } as unknown as ApplyEnv
  await release(values()).apply(env, stuck('pending-upgrade', 3))
  assert.deepEqual(calls, [{ release: 'karpenter', namespace: 'kube-system', revision: 3, wait: false }])
})
