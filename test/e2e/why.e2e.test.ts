// karpctl why on the real bed (kube-apiserver + etcd, helm and the Karpenter chart, moto whose EC2
// describes the region's real instance types and offerings): the corpus of why-corpus.ts, seeded into
// the cluster of why-corpus-cluster.ts, judged with one `why --all-pending -A --json`; every pod must
// get its known reason at its NodePool and the verdict the table gives at every other NodePool, and
// the pods that fit must fit. Then a workload (grouping), one pod as text, and the exit codes.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { karpctlOn, parseJsonOut, seedAws, seedKubernetes, shown, startBed, type Bed } from './bed/index.js'
import { seedClaim, seedPod } from './bed/workload-seed.js'
import { CORPUS, type CorpusEntry } from './why-corpus.js'
import { seedCorpusCluster } from './why-corpus-cluster.js'

interface PoolJson {
  nodePool: string
  weight: number
  status: string
  rule?: string
  message: string
  fix?: { summary: string; commands?: string[] }
}
interface GroupJson {
  namespace: string
  pods: string[]
  owner: { kind: string; name: string }
  outcome: string
  ignored?: { reason: string; message: string }
  nodePools: PoolJson[]
  karpenter: { events: { reason: string; message: string }[]; activity?: string }
}
interface WhyJson {
  schema: string
  order: { nodePool: string; weight: number }[]
  groups: GroupJson[]
  unreadable: string[]
  summary: { pods: number; ignored: number; fits: number; none: number; couldNotTell: number }
}

const why = (bed: Bed, args: string[]) => karpctlOn(bed, ['why', ...args])

/** What is wrong with one pod's verdicts against the table (empty: all as expected). */
function mismatches(e: CorpusEntry, g: GroupJson | undefined): string[] {
  const at = `${e.pod.namespace}/${e.pod.name} (${e.category}: ${e.why})`
  if (!g) return [`${at}: not in the report`]
  const out: string[] = []
  if (g.outcome !== e.outcome) out.push(`${at}: outcome ${g.outcome}, expected ${e.outcome}`)
  if (e.ignored) {
    if (g.ignored?.reason !== e.ignored.reason || !e.ignored.message.test(g.ignored.message))
      out.push(
        `${at}: ignored ${JSON.stringify(g.ignored)}, expected ${e.ignored.reason} ${e.ignored.message}`,
      )
    if (g.nodePools.length) out.push(`${at}: an ignored pod judged at NodePools`)
  }
  for (const [pool, x] of Object.entries(e.nodePools ?? {})) {
    const v = g.nodePools.find((p) => p.nodePool === pool)
    if (!v) {
      out.push(`${at} @${pool}: no verdict`)
      continue
    }
    const fixText = `${v.fix?.summary ?? ''}\n${(v.fix?.commands ?? []).join('\n')}`
    if (
      v.status !== x.status ||
      v.rule !== x.rule ||
      !x.message.test(v.message) ||
      (x.fix && !x.fix.test(fixText))
    )
      out.push(
        `${at} @${pool}: ${v.status} ${v.rule}: ${v.message}${v.fix ? ` | fix: ${fixText}` : ''}\n    expected ${x.status} ${x.rule}: ${x.message}${x.fix ? ` | fix ${x.fix}` : ''}`,
      )
  }
  if (e.nodePools && g.nodePools.length !== Object.keys(e.nodePools).length)
    out.push(`${at}: judged at ${g.nodePools.map((p) => p.nodePool).join(', ')}`)
  return out
}

describe('karpctl why: the corpus on the real bed', { timeout: 900_000 }, () => {
  let bed: Bed
  before(async () => {
    bed = await startBed()
    const seed = await seedAws(bed)
    await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1' })
    await seedCorpusCluster(bed.kube, seed)
    for (const e of CORPUS) {
      for (const c of e.claims ?? []) await seedClaim(bed.kube, e.pod.namespace, c.claim, c)
      await seedPod(bed.kube, e.pod)
    }
  })
  after(() => bed?.stop())

  test('the corpus is what issue 22 asks: ≥ 20 pending pods with a known reason in each of the eleven categories, ≥ 10 that fit', () => {
    const reasons = CORPUS.filter((e) => e.category !== 'fits')
    assert.ok(reasons.length >= 20, `${reasons.length} pods with a reason`)
    assert.deepEqual([...new Set(reasons.map((e) => e.category))].sort(), [
      'devices',
      'ephemeral-storage',
      'host-ports',
      'ignored',
      'instance-types',
      'karpenter',
      'nodepool',
      'requirements',
      'taints',
      'topology-spread',
      'zones',
    ])
    assert.ok(CORPUS.filter((e) => e.outcome === 'fits').length >= 10)
  })

  test('why --all-pending -A --json: every pod gets its reason and NodePool, the pods that fit fit; exit 1', async () => {
    const r = await why(bed, ['--all-pending', '-A', '--json'])
    assert.equal(r.code, 1, shown(r))
    const report = parseJsonOut<WhyJson>(r, 'why --all-pending')
    assert.equal(report.schema, 'karpctl.why/v1')
    assert.deepEqual(report.unreadable, [])
    assert.deepEqual(
      report.order.map((o) => o.nodePool),
      ['gpu', 'arm', 'broken', 'capped', 'default', 'full', 'orphan', 'small'],
    )
    const groupOf = (e: CorpusEntry) =>
      report.groups.find((g) => g.namespace === e.pod.namespace && g.pods.includes(e.pod.name))
    const wrong = CORPUS.flatMap((e) => mismatches(e, groupOf(e)))
    assert.deepEqual(wrong, [], `${wrong.length} verdicts differ:\n${wrong.join('\n')}`)
    // Nothing but the corpus is Pending, and every corpus pod is judged once.
    assert.equal(report.summary.pods, CORPUS.length)
    const count = (o: string) => CORPUS.filter((e) => e.outcome === o).length
    assert.deepEqual(
      [report.summary.fits, report.summary.none, report.summary.ignored, report.summary.couldNotTell],
      [count('fits'), count('none'), count('ignored'), 0],
    )
    // Karpenter's own word rides along with a verdict: its events, newest first.
    const withEvents = report.groups.find((g) => g.pods.includes('with-events'))
    assert.equal(withEvents?.karpenter.events[0]?.reason, 'FailedScheduling')
    assert.match(
      withEvents?.karpenter.activity ?? '',
      /^Karpenter has not nominated a NodeClaim for it; controller kube-system\/karpenter has \d+\/\d+ replicas ready$/,
    )
  })

  test('why deployment/web: its Pending pods grouped by identical spec', async () => {
    const r = await why(bed, ['deployment/web', '-n', 'shop', '--json'])
    assert.equal(r.code, 1, shown(r))
    const report = parseJsonOut<WhyJson>(r, 'why deployment/web')
    assert.deepEqual(
      report.groups.map((g) => [g.pods.sort(), g.owner, g.outcome]),
      [
        [
          ['web-6d4cf56db6-aaaaa', 'web-6d4cf56db6-bbbbb', 'web-6d4cf56db6-ccccc'],
          { kind: 'Deployment', name: 'web' },
          'fits',
        ],
        [['web-6d4cf56db6-ddddd'], { kind: 'Deployment', name: 'web' }, 'none'],
      ],
    )
    const human = await why(bed, ['deployment/web', '-n', 'shop'])
    assert.equal(human.code, 1, shown(human))
    assert.match(
      human.stdout,
      /^3 pods in shop: web-6d4cf56db6-aaaaa, web-6d4cf56db6-bbbbb, web-6d4cf56db6-ccccc \(deployment\/web\) — requests cpu 500m, memory 1Gi$/m,
    )
    assert.match(human.stdout, /^pod shop\/web-6d4cf56db6-ddddd \(deployment\/web\)/m)
  })

  test('why POD: one block, a line per NodePool in weight order, the fix under the failing one', async () => {
    const r = await why(bed, ['to-capped', '-n', 'shop'])
    assert.equal(r.code, 1, shown(r))
    const lines = r.stdout.split('\n')
    const start = lines.findIndex((l) => l.startsWith('pod shop/to-capped'))
    assert.ok(start > 0, shown(r))
    assert.match(lines[start] ?? '', /^pod shop\/to-capped — requests cpu 1900m, memory 1Gi$/)
    const pools = lines.slice(start + 1).filter((l) => /^ {2}[✔✖?] /.test(l))
    assert.deepEqual(
      pools.map((l) => l.slice(2).split(':')[0]),
      ['✖ gpu (weight 50)', '✖ arm', '✖ broken', '✖ capped', '✖ default', '✖ full', '✖ orphan', '✖ small'],
    )
    const capped = lines.findIndex((l) => l.startsWith('  ✖ capped: '))
    assert.match(
      lines[capped] ?? '',
      /^ {2}✖ capped: no instance type fits what is left of limit cpu 4: its NodeClaims hold 2, leaving 2, and the smallest of the \d+ types left, \S+, has 4 cpu$/,
    )
    assert.match(
      lines[capped + 1] ?? '',
      /^ {6}fix: raise NodePool capped's cpu limit \(spec\.limits\.cpu\), or free capacity it holds$/,
    )
    assert.equal(
      lines[capped + 2],
      `        $ kubectl patch nodepool capped --type merge -p '{"spec":{"limits":{"cpu":"6"}}}'`,
    )
    assert.match(r.stdout, /^ {2}→ no NodePool can take it$/m)
    assert.match(
      r.stdout,
      /^1 pod: 1 without a NodePool, 0 could not tell, 0 with a NodePool, 0 ignored by Karpenter$/m,
    )
  })

  test('exit code 0: a pod a NodePool can take, one Karpenter ignores, a Job whose pods fit (1 is proven above)', async () => {
    const fits = await why(bed, ['plain', '-n', 'shop'])
    assert.equal(fits.code, 0, shown(fits))
    assert.match(fits.stdout, /^ {2}✔ default: \d+ of \d+ instance types have room/m)
    assert.match(fits.stdout, /^ {2}→ a NodePool can take it$/m)
    const ignored = await why(bed, ['volcano-task', '-n', 'batch'])
    assert.equal(ignored.code, 0, shown(ignored))
    assert.match(ignored.stdout, /^ {2}– ignored: the pod is scheduled by volcano/m)
    const job = await why(bed, ['job/train', '-n', 'batch'])
    assert.equal(job.code, 0, shown(job))
  })
})
