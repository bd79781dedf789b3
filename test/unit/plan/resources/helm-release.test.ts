import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { test } from 'node:test'
import { shapeOf } from '../../../helpers/resource-shape.js'
import { parse } from 'yaml'
import type { HelmUpgrade } from '../../../../src/context/helm.js'
import { findRelease, RELEASE_SELECTOR, releaseNamed } from '../../../../src/facts/collect-kube.js'
import type { HelmRelease } from '../../../../src/facts/types.js'
import { planJson, renderPlan } from '../../../../src/plan/render.js'
import {
  ADOPTED_FROM_REVISION,
  helmRelease,
  recoveryOf,
  UPGRADED_TO,
  type ReleaseState,
} from '../../../../src/plan/resources/helm-release.js'
import { ADOPTED_BY } from '../../../../src/desired/ownership.js'
import type { ApplyEnv, Plan } from '../../../../src/plan/types.js'
import { helmReleaseSecret, type KubeObject } from '../../../helpers/mock-cluster.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

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

/** A release want with the shared defaults and `over` on top. */
const want = (over: Partial<Parameters<typeof helmRelease>[0]> = {}) =>
  helmRelease({
    address: 'helm.karpenter',
    release: 'karpenter',
    namespace: 'kube-system',
    chart: 'oci://public.ecr.aws/karpenter/karpenter',
    chartName: 'karpenter',
    expectedVersion: '1.14.1',
    values: values(),
    labels: LABELS,
    adopt: false,
    dependsOn: ['iam.controller'],
    ...over,
  })

/** The release as install wants it, with `v` as its values. */
const release = (v: Record<string, unknown>) => want({ version: '1.14.1', values: v, dependsOn: [] })

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
      upgradeInstall: async (u: HelmUpgrade) => seen.push(parse(u.values)),
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
  const adopting = want({ adoptLabels: { 'karpctl.io/adopted-by': 'karpctl' }, adopt: true, dependsOn: [] })
  assert.match(adopting.verdict(cur).blocked ?? '', /pending-upgrade by a helm run karpctl did not start/)
  // A revision karpctl's adoption made is karpctl's to recover.
  const mine = { ...cur, labels: { 'karpctl.io/adopted-by': 'karpctl' } }
  assert.equal(adopting.verdict(mine).blocked, undefined)
})

test("an upgrade of a release karpctl did not install: labelled as karpctl's upgrade, no rollback point (an earlier adoption's cleared); install's adoption keeps one", async () => {
  const UPGRADE_LABELS = { [ADOPTED_BY]: 'demo', [UPGRADED_TO]: '1.14.1' }
  const wantUpgrade = (upgradedTo?: string) =>
    want({
      labels: upgradedTo ? UPGRADE_LABELS : LABELS,
      adoptLabels: { [ADOPTED_BY]: 'demo' },
      adopt: true,
      dependsOn: [],
      ...(upgradedTo ? { upgradedTo } : {}),
    })
  const labelsOf = async (r: ReturnType<typeof wantUpgrade>, cur: ReleaseState | null) => {
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
  assert.deepEqual(await labelsOf(wantUpgrade('1.14.1'), theirs({})), {
    ...UPGRADE_LABELS,
    [ADOPTED_FROM_REVISION]: 'null',
  })
  // One `install --adopt` took earlier (a rollback point on it): Helm would carry it on; "null" drops it.
  const adopted = theirs({ [ADOPTED_BY]: 'demo', [ADOPTED_FROM_REVISION]: '2' })
  assert.equal((await labelsOf(wantUpgrade('1.14.1'), adopted))?.[ADOPTED_FROM_REVISION], 'null')
  // A release the upgrade creates (karpenter-crd beside a getting-started install): its labels as they are.
  assert.deepEqual(await labelsOf(wantUpgrade('1.14.1'), null), UPGRADE_LABELS)
  assert.match(
    wantUpgrade('1.14.1').verdict(theirs({})).note ?? '',
    /installed without karpctl: upgraded as asked.*no rollback point.*teardown keeps it at 1\.14\.1, taking off karpctl's labels only/,
  )
  // install --adopt (no upgrade): the adoption and the revision teardown gives back.
  assert.deepEqual(await labelsOf(wantUpgrade(), theirs({})), {
    [ADOPTED_BY]: 'demo',
    [ADOPTED_FROM_REVISION]: '5',
  })
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

const ADOPT_LABELS = { [ADOPTED_BY]: 'demo', 'karpctl.io/adopted-at': 'install' }

/** An installed release with `over` on its release and `labels` on its Secret. */
const live = (labels: Record<string, string>, over: Partial<HelmRelease> = {}): ReleaseState => {
  const s = installed(values())
  return { ...s, release: { ...s.release, ...over }, labels }
}

test('a release step: Kubernetes group, no IAM permissions, its chart, version, namespace and values as desired', () => {
  // Kills: group '' and permissions ['Stryker was here'].
  const r = want()
  assert.deepEqual(shapeOf(r), {
    address: 'helm.karpenter',
    kind: 'Helm release',
    name: 'kube-system/karpenter',
    group: 'Kubernetes',
    dependsOn: ['iam.controller'],
    desired: {
      chart: 'oci://public.ecr.aws/karpenter/karpenter',
      version: '1.14.1',
      namespace: 'kube-system',
      values: values(),
    },
    documents: { values: values() },
    permissions: [],
  })
})

test('recoveryOf: a pending release nobody measured helm for rolls back; several helms are all named; a first install is uninstalled', () => {
  // Kills: helmRunning?.length → .length, join(', ') → join(''), { uninstall: true } → false.
  const base = stuck('pending-upgrade', 3)
  assert.deepEqual(recoveryOf({ ...base, helmRunning: undefined }), { rollback: 3 })
  assert.deepEqual(recoveryOf(stuck('pending-upgrade', 3, [11, 12])), {
    blocked:
      'release kube-system/karpenter is pending-upgrade (revision 4): helm (pid 11, 12) is still at it; let it finish, then run the same command again',
  })
  assert.deepEqual(recoveryOf(stuck('pending-install')), { uninstall: true })
  assert.equal(recoveryOf(installed({})), null)
  assert.equal(recoveryOf(null), null)
})

test('an older chart on the same values: the one change is the chart, from the live one', () => {
  // Kills: from `${chartName}-${chartVersion}` → ``.
  const v = want().verdict(live(LABELS, { chartVersion: '1.0.14' }))
  assert.deepEqual(v, {
    action: 'update',
    changes: [{ field: 'chart', from: 'karpenter-1.0.14', to: 'karpenter-1.14.1' }],
    note: undefined,
  })
})

test('another Karpenter release elsewhere blocks the install (create) and an upgrade of this one (update)', () => {
  // Kills: `if (cur?.other)` → false and every literal of that verdict.
  const other = { ...installed({}).release, name: 'karpenter', namespace: 'karpenter', chartVersion: '1.2.0' }
  const blocked =
    'Karpenter is already installed as release karpenter/karpenter (chart 1.2.0): a second controller would fight it; run `karpctl doctor` on that install, or remove it first'
  assert.deepEqual(want().verdict({ other } as ReleaseState), { action: 'create', changes: [], blocked })
  assert.deepEqual(want().verdict({ ...installed(values()), other }), {
    action: 'update',
    changes: [],
    blocked,
  })
})

test('a release installed without karpctl: blocked without --adopt (also when no adoption labels are asked for), planned when its labels are the adoption', () => {
  // Kills: the adoption check → false, !isOwned(adoptLabels) → isOwned, the adoptLabels guard → true.
  const blocked = {
    action: 'update',
    changes: [],
    blocked:
      'installed without karpctl: pass --adopt to let karpctl upgrade it, or leave it to the tool that made it',
  }
  assert.deepEqual(want({ adoptLabels: ADOPT_LABELS }).verdict(live({})), blocked)
  // No adoption labels asked for is no adoption (an empty set would match every release's labels).
  assert.deepEqual(want().verdict(live({})), blocked)
  assert.deepEqual(want().verdict(live({ [ADOPTED_BY]: 'demo' })), blocked)
  // Adopted by an earlier install --adopt: its next revision is planned, no --adopt needed again.
  assert.deepEqual(want({ adoptLabels: ADOPT_LABELS }).verdict(live(ADOPT_LABELS)), {
    action: 'unchanged',
    changes: [],
    note: "adopted (installed without karpctl): its revisions are labelled karpctl.io/adopted-by, karpctl.io/adopted-at, never as karpctl's; teardown keeps it",
  })
})

test('a pending release with a helm still at it: blocked as an update with no changes', () => {
  // Kills: { action: 'update', changes: [] } literals of the recovery-blocked verdict.
  assert.deepEqual(want().verdict(stuck('pending-upgrade', 3, [7])), {
    action: 'update',
    changes: [],
    blocked:
      'release kube-system/karpenter is pending-upgrade (revision 4): helm (pid 7) is still at it; let it finish, then run the same command again',
  })
})

test('a pending release of another tool, adopted with no adoption labels: blocked exactly', () => {
  // Kills: `adoptLabels !== undefined && …` → true (isOwned of undefined throws) and the verdict's literals.
  const cur = { ...stuck('pending-upgrade', 3), labels: {} }
  assert.deepEqual(want({ adopt: true }).verdict(cur), {
    action: 'update',
    changes: [],
    blocked:
      'release kube-system/karpenter is pending-upgrade by a helm run karpctl did not start: let its tool finish it (or `helm rollback` it), then run the same command again',
  })
})

test('notes: none for a release of karpctl or a new one (upgrade or not); the adoption named exactly, even with no adoption labels', () => {
  // Kills: the notes' conditions → true / ||, their [] → ['Stryker was here'], `adoptLabels ?? {}` → `&&`.
  const upgrade = { labels: { ...ADOPT_LABELS, [UPGRADED_TO]: '1.14.1' }, upgradedTo: '1.14.1', adopt: true }
  assert.deepEqual(want().verdict(installed(values())), { action: 'unchanged', changes: [], note: undefined })
  assert.equal(want(upgrade).verdict(live(upgrade.labels)).note, undefined)
  assert.equal(want(upgrade).verdict(null).note, undefined)
  assert.equal(want().verdict(null).note, undefined)
  assert.equal(
    want(upgrade).verdict(live({}, { chartVersion: '1.0.14' })).note,
    "installed without karpctl: upgraded as asked, its new revisions labelled karpctl.io/adopted-by, karpctl.io/adopted-at, karpctl.io/upgraded-to (no rollback point); teardown keeps it at 1.14.1, taking off karpctl's labels only",
  )
  assert.equal(
    want({ adopt: true }).verdict(live({})).note,
    "adopted (installed without karpctl): never labelled as karpctl's; teardown keeps it",
  )
})

test('an adopted release left pending: both notes, joined by "; "', () => {
  // Kills: notes.join('; ') → join('').
  const cur = { ...stuck('pending-upgrade', 3), labels: ADOPT_LABELS }
  assert.equal(
    want({ adoptLabels: ADOPT_LABELS }).verdict(cur).note,
    "adopted (installed without karpctl): its revisions are labelled karpctl.io/adopted-by, karpctl.io/adopted-at, never as karpctl's; teardown keeps it; left pending-upgrade by a stopped helm: rolled back to revision 3 first, then upgraded",
  )
})

test('apply: no values file is ever written (issue 36.3); an adoption records its revision under karpctl.io/adopted-from-revision', async () => {
  // Kills: ADOPTED_FROM_REVISION → ''.
  const before = new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('karpctl-')))
  const seen: { values: string; temp: string[]; labels: Record<string, string> }[] = []
  const env = {
    helm: async () => ({
      upgradeInstall: async (u: HelmUpgrade) =>
        void seen.push({
          values: u.values,
          temp: readdirSync(tmpdir()).filter((f) => f.startsWith('karpctl-values') && !before.has(f)),
          labels: u.labels,
        }),
    }),
  } as unknown as ApplyEnv
  await want({ adopt: true, adoptLabels: ADOPT_LABELS }).apply(env, live({}, { revision: 5 }))
  assert.equal(seen.length, 1)
  assert.deepEqual(seen[0]!.temp, [])
  assert.match(seen[0]!.values, /\S/)
  assert.deepEqual(seen[0]!.labels, { ...ADOPT_LABELS, 'karpctl.io/adopted-from-revision': '5' })
})

const repair = (over: Partial<Parameters<typeof helmRelease>[0]> = {}) =>
  want({
    address: 'helm.karpenter.repair',
    labels: { 'karpctl.io/repaired': 'doctor-fix', 'karpctl.io/repaired-by': 'demo' },
    repair: 'sets tolerations',
    ...over,
  })

test('a repair: of a gone release blocked; with a chart folder of another version blocked; never a chart change', () => {
  // Kills: `!cur?.release` → false / cur.release, the blocked verdicts' literals, the chart filter.
  assert.deepEqual(repair().verdict(null), {
    action: 'update',
    changes: [],
    blocked: 'release kube-system/karpenter is gone: nothing to repair',
  })
  assert.deepEqual(repair({ chartFolderVersion: '1.13.0' }).verdict(live({})), {
    action: 'update',
    changes: [],
    blocked:
      '--chart-dir holds karpenter 1.13.0 but the release runs 1.14.1: a repair keeps the version; give the folder of 1.14.1',
  })
  // The release runs another chart version: a repair keeps it, so nothing to do on the same values.
  const older = live({}, { chartVersion: '1.0.14' })
  assert.deepEqual(repair().verdict(older), { action: 'unchanged', changes: [] })
  assert.deepEqual(repair({ chartFolderVersion: '1.14.1' }).verdict(live({})), {
    action: 'unchanged',
    changes: [],
  })
  assert.deepEqual(repair().verdict(live({}, { chartVersion: '1.0.14', status: 'failed' })), {
    action: 'update',
    changes: [{ field: 'status', from: 'failed', to: 'deployed' }],
    note: 'sets tolerations: a new revision (helm rollback undoes it), labelled karpctl.io/repaired, karpctl.io/repaired-by',
  })
})

// A release name and namespace no helm on this machine works on: the /proc scan finds none at it.
const OBSERVED = { release: 'karpenter-unit-observe', namespace: 'karpctl-unit' }

/** An env whose API server lists `mine` in the release's namespace and `everywhere` across the cluster. */
function releasesEnv(mine: KubeObject[], everywhere: KubeObject[] = []): ApplyEnv {
  const named = encodeURIComponent(`${RELEASE_SELECTOR},name=${OBSERVED.release}`)
  return recordingEnv({
    kube: {
      [`/api/v1/namespaces/${OBSERVED.namespace}/secrets?labelSelector=${named}`]: { items: mine },
      [`/api/v1/secrets?labelSelector=${encodeURIComponent(RELEASE_SELECTOR)}`]: { items: everywhere },
    },
  }).env
}

const secret = (o: { name?: string; namespace?: string; revision?: number; status?: string } = {}) =>
  helmReleaseSecret({ name: OBSERVED.release, namespace: OBSERVED.namespace, ...o })

const observer = (unique: boolean) => want({ ...OBSERVED, unique })

test('observe: the release and its labels; helm processes looked for only on a pending one (none here, no kube context needed)', async () => {
  // Kills: Promise.all([]) , startsWith → endsWith / '', kubeTarget?.context → .context, the helmRunning spread.
  const deployed = releasesEnv([secret({ revision: 2 })])
  const found = await releaseNamed(deployed.kube, OBSERVED.namespace, OBSERVED.release)
  assert.deepEqual(await observer(false).observe(deployed), { ...found, other: undefined })
  const pending = releasesEnv([secret({ revision: 3, status: 'pending-upgrade' }), secret({ revision: 2 })])
  const stuckOne = await releaseNamed(pending.kube, OBSERVED.namespace, OBSERVED.release)
  assert.equal(stuckOne?.lastDeployed, 2)
  assert.deepEqual(await observer(false).observe(pending), { ...stuckOne, other: undefined, helmRunning: [] })
  assert.equal(await observer(false).observe(releasesEnv([])), null)
})

test('observe, unique: a Karpenter release under another name or namespace is the other; this one found again is not', async () => {
  // Kills: each part of `any && (any.name !== release || any.namespace !== namespace)`.
  const elsewhere = [
    helmReleaseSecret({ name: OBSERVED.release, namespace: 'karpenter' }),
    helmReleaseSecret({ name: 'karpenter', namespace: OBSERVED.namespace }),
  ]
  for (const s of elsewhere) {
    const env = releasesEnv([], [s])
    const other = await findRelease(env.kube)
    assert.deepEqual(await observer(true).observe(env), { other })
    const both = releasesEnv([secret()], [s])
    const mine = await releaseNamed(both.kube, OBSERVED.namespace, OBSERVED.release)
    assert.deepEqual(await observer(true).observe(both), { ...mine, other })
  }
  assert.equal(await observer(true).observe(releasesEnv([], [secret()])), null)
  assert.equal(await observer(true).observe(releasesEnv([], [])), null)
  const self = releasesEnv([secret()], [secret()])
  const mine = await releaseNamed(self.kube, OBSERVED.namespace, OBSERVED.release)
  assert.deepEqual(await observer(true).observe(self), { ...mine, other: undefined })
  // Not unique: another release anywhere is never looked for.
  assert.equal(await observer(false).observe(releasesEnv([], elsewhere)), null)
})
