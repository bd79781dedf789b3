// The secret corpus (test/helpers/secret-corpus.ts) through every output of every command, run as a user
// runs it on the HTTP-level mock of `demo` (issue 36.1, "Tests that generalise"): each judged shape
// planted where karpctl reads it on the wire — the release's values, the controller's env, the
// ServiceAccount's last-applied-configuration, a NodePool's annotations and taints, an EC2NodeClass's
// userData and tags, the controller role's tags — and in install's --values file; then looked for in
// doctor (human, --json, every --output, --save-snapshot, --debug), tenant list (human, --json) and
// the plans of install, tenant add, upgrade and teardown (--dry-run, --show-policies, --json,
// --debug). Planted/leaked are printed per output and per half: the gitleaks half (the rules were
// written from it) leaks nothing; the held-back trufflehog half is the measure (≤ 2%).
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { stringify } from 'yaml'
import Doctor from '../../src/commands/doctor.js'
import Install from '../../src/commands/install.js'
import Teardown from '../../src/commands/teardown.js'
import TenantAdd from '../../src/commands/tenant/add.js'
import TenantList from '../../src/commands/tenant/list.js'
import Upgrade from '../../src/commands/upgrade.js'
import { TENANT_KEY } from '../../src/desired/ownership.js'
import {
  defaultReleaseValues,
  helmReleaseSecret,
  startMockCluster,
  type MockCluster,
  type MockState,
} from '../helpers/mock-cluster.js'
import { runInProcess, type InProcess } from '../helpers/run-command.js'
import { CORPUS, leftOut, type Entry } from '../helpers/secret-corpus.js'

let dir: string
before(() => (dir = mkdtempSync(join(tmpdir(), 'karpctl-corpus-cli-'))))
after(() => rmSync(dir, { recursive: true, force: true }))

const CONTROLLER_ROLE = 'KarpenterControllerRole-demo'

/** Where an entry is planted on the wire: each a field karpctl reads, as a cluster holds it. */
const SITES: ((s: MockState, e: Entry, i: number, values: Record<string, unknown>) => void)[] = [
  (_s, e, i, values) => (values[`vendor${i}`] = { settings: { note: e.text } }),
  (s, e, i) => {
    const c = (s.kube.deployments[0]!.spec as { template: { spec: { containers: { env: unknown[] }[] } } })
      .template.spec.containers[0]!
    c.env.push({ name: `VENDOR_${i}`, value: e.text })
  },
  (s, e) => {
    const sa = s.kube.serviceAccounts[0]!.metadata
    const key = 'kubectl.kubernetes.io/last-applied-configuration'
    const prior = sa.annotations?.[key]
    const applied = prior ? (JSON.parse(prior) as { notes: string[] }) : { notes: [] }
    applied.notes.push(e.text)
    sa.annotations = { ...sa.annotations, [key]: JSON.stringify(applied) }
  },
  (s, e, i) => {
    const np = s.kube.nodePools[0]!.metadata
    np.annotations = { ...np.annotations, [`vendor.example.com/n${i}`]: e.text }
  },
  (s, e, i) => {
    const spec = (s.kube.nodePools[0]!.spec as { template: { spec: { taints?: unknown[] } } }).template.spec
    ;(spec.taints ??= []).push({ key: `vendor${i}`, value: e.text, effect: 'NoSchedule' })
  },
  (s, e) => {
    const spec = s.kube.nodeClasses[0]!.spec as Record<string, unknown>
    spec.userData = `${typeof spec.userData === 'string' ? spec.userData : ''}echo "${e.text}" >> /etc/vendor\n`
  },
  (s, e, i) => {
    const spec = s.kube.nodeClasses[0]!.spec as { tags?: Record<string, string> }
    spec.tags = { ...spec.tags, [`vendor-${i}`]: e.text }
  },
  (s, e, i) => {
    const role = s.roles[CONTROLLER_ROLE]!
    role.tags = { ...role.tags, [`vendor-${i}`]: e.text }
  },
]

/** The healthy `demo` with every entry planted, its default NodePool a tenant (so tenant list shows it). */
function planted(entries: Entry[], chartVersion?: string) {
  return (s: MockState) => {
    const values: Record<string, unknown> = {}
    entries.forEach((e, i) => SITES[i % SITES.length]!(s, e, i, values))
    s.kube.helmSecrets = [
      helmReleaseSecret({ values: { ...defaultReleaseValues(), vendor: values }, chartVersion }),
      ...s.kube.helmSecrets.slice(1),
    ]
    const np = s.kube.nodePools[0]!.metadata
    np.labels = { ...np.labels, [TENANT_KEY]: 'default' }
  }
}

const TARGET = ['--cluster', 'demo', '--region', 'us-west-2']

/** Every output of every command, for one half planted on a fresh mock. */
async function outputs(entries: Entry[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const keep = (name: string, r: InProcess) => {
    assert.ok(!/\n\s+at .*\.(ts|js):\d+/.test(r.stderr) || name.endsWith('--debug'), `${name}: a stack`)
    out[name] = r.stdout + r.stderr
  }
  const valuesFile = join(dir, 'values.yaml')
  writeFileSync(
    valuesFile,
    stringify({ vendor: Object.fromEntries(entries.map((e, i) => [`k${i}`, { note: e.text }])) }),
  )
  let mock: MockCluster = startMockCluster({ mutate: planted(entries), expectations: false })
  try {
    const snap = join(dir, 'snapshot.json')
    keep('doctor', await runInProcess(Doctor, [...TARGET, '--verbose']))
    keep('doctor --json', await runInProcess(Doctor, [...TARGET, '--json']))
    for (const f of ['sarif', 'junit', 'markdown'])
      keep(`doctor --output ${f}`, await runInProcess(Doctor, [...TARGET, '--output', f]))
    keep('doctor --save-snapshot', await runInProcess(Doctor, [...TARGET, '--save-snapshot', snap]))
    out['the saved snapshot'] = readFileSync(snap, 'utf8')
    keep('doctor --snapshot', await runInProcess(Doctor, ['--snapshot', snap, '--verbose']))
    keep('doctor --debug', await runInProcess(Doctor, [...TARGET, '--debug']))
    keep('tenant list', await runInProcess(TenantList, TARGET))
    keep('tenant list --json', await runInProcess(TenantList, [...TARGET, '--json']))
    const install = [...TARGET, '--identity', 'pod-identity', '--adopt', '--values', valuesFile, '--dry-run']
    keep('install --dry-run', await runInProcess(Install, install))
    keep('install --show-policies', await runInProcess(Install, [...install, '--show-policies']))
    keep('install --json', await runInProcess(Install, [...install, '--json']))
    keep('install --debug', await runInProcess(Install, [...install, '--debug']))
    const tenant = ['acme', ...TARGET, '--dry-run']
    keep('tenant add --dry-run', await runInProcess(TenantAdd, tenant))
    keep('tenant add --json', await runInProcess(TenantAdd, [...tenant, '--json']))
    keep('tenant add --debug', await runInProcess(TenantAdd, [...tenant, '--debug']))
    keep('teardown --dry-run', await runInProcess(Teardown, [...TARGET, '--dry-run']))
    keep('teardown --json', await runInProcess(Teardown, [...TARGET, '--dry-run', '--json']))
    keep('teardown --debug', await runInProcess(Teardown, [...TARGET, '--dry-run', '--debug']))
    // upgrade plans from an older install: the same plants on a 1.0.14 release.
    mock.stop()
    mock = startMockCluster({ mutate: planted(entries, '1.0.14'), expectations: false })
    const upgrade = [...TARGET, '--dry-run']
    keep('upgrade --dry-run', await runInProcess(Upgrade, upgrade))
    keep('upgrade --show-policies', await runInProcess(Upgrade, [...upgrade, '--show-policies']))
    keep('upgrade --json', await runInProcess(Upgrade, [...upgrade, '--json']))
    keep('upgrade --debug', await runInProcess(Upgrade, [...upgrade, '--debug']))
  } finally {
    mock.stop()
  }
  return out
}

for (const half of ['gitleaks', 'trufflehog'] as const) {
  const judged = CORPUS[half].filter((e) => leftOut(e) === null)
  test(`every command's every output, ${half}: ${judged.length} shapes planted on the wire; none leaked (held back: ≤ 2%)`, async () => {
    const out = await outputs(judged)
    const leakedIn = (text: string) => judged.filter((e) => text.includes(e.secret))
    const table = Object.entries(out).map(([where, text]) => `${where} ${leakedIn(text).length}`)
    console.log(
      `corpus through the CLI, ${half}: planted ${judged.length}; leaked per output: ${table.join(', ')}`,
    )
    // The control: the commands ran and showed what they read (a failed read would show nothing).
    assert.match(out['tenant list'] ?? '', /default/)
    assert.match(out['install --dry-run'] ?? '', /values\.vendor\.k0\.note: /)
    const leaked = new Set(Object.values(out).flatMap((text) => leakedIn(text).map((e) => e.source)))
    if (half === 'gitleaks') assert.deepEqual([...leaked], [])
    else assert.ok(leaked.size <= judged.length * 0.02, `${leaked.size}: ${[...leaked].join(', ')}`)
  })
}
