// A saved snapshot keeps free text only where a judgement reads it (src/facts/free-text.ts). Free text
// is planted in every field of that kind in doctor's, why's and why-node's facts — every annotation,
// label, env, tag and values map gets an extra entry, every message, userData and log line more text —
// then the snapshot is saved as the commands save it and walked: free text that survived where
// FREE_TEXT does not say a judgement reads it fails the test, naming the path.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { runChecks } from '../../../src/checks/run.js'
import { FREE_TEXT, freeTextAt, judgedAnnotation, keepJudged } from '../../../src/facts/free-text.js'
import { loadSnapshot, saveSnapshot } from '../../../src/facts/snapshot.js'
import { healthyFacts } from '../../helpers/facts.js'
import { repoRoot } from '../../helpers/fixtures.js'

let dir: string
before(() => (dir = mkdtempSync(join(tmpdir(), 'karpctl-free-text-'))))
after(() => rmSync(dir, { recursive: true, force: true }))

/** Free text no judgement reads: a word no check or why would ever match on. */
const PLANT = 'planted-free-text-Q7'
/** Property names whose values are free text wherever they are (maps of it, or text). */
const MAPS = new Set(['annotations', 'labels', 'env', 'tags', 'values', 'computedValues', 'data'])
const TEXTS = new Set(['message', 'userData', 'note', 'description', 'line', 'text'])

/** `facts` with PLANT in every free-text field it has; how many were planted. */
function plant<T>(facts: T): { facts: T; planted: number } {
  let planted = 0
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk)
    if (!v || typeof v !== 'object') return v
    const out: Record<string, unknown> = {}
    for (const [k, child] of Object.entries(v)) {
      if (MAPS.has(k) && child && typeof child === 'object' && !Array.isArray(child)) {
        planted++
        out[k] = { ...(walk(child) as object), 'example.com/free-text': PLANT }
      } else if (TEXTS.has(k) && typeof child === 'string') {
        planted++
        out[k] = `${child} ${PLANT}`
      } else out[k] = walk(child)
    }
    return out
  }
  return { facts: walk(facts) as T, planted }
}

/** Every path in `value` where PLANT is (in a key or in text), as keys from the root. */
function survivors(value: unknown, path: string[] = [], found: string[][] = []): string[][] {
  if (typeof value === 'string') {
    if (value.includes(PLANT)) found.push(path)
  } else if (Array.isArray(value)) value.forEach((v, i) => survivors(v, [...path, String(i)], found))
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) survivors(v, [...path, k], found)
  return found
}

/** A survivor is allowed only inside a free-text field a judgement reads, and for a keyed map, a judged key. */
function unjudged(found: string[][]): string[] {
  return found
    .filter((path) => {
      for (let n = path.length; n > 0; n--) {
        const field = freeTextAt(path.slice(0, n))
        if (!field) continue
        if (!field.judgedBy) return true
        return field.keys ? !field.keys(path[n] ?? '') : false
      }
      return true
    })
    .map((p) => p.join('.'))
}

async function saved<T extends object>(name: string, facts: T): Promise<unknown> {
  const path = join(dir, `${name}.json`)
  await saveSnapshot(path, facts)
  return JSON.parse(readFileSync(path, 'utf8'))
}

const whyFacts = (file: string) =>
  JSON.parse(readFileSync(join(repoRoot, 'examples', 'why', file), 'utf8')) as object

for (const [name, facts] of [
  ['doctor (a healthy cluster)', () => healthyFacts()],
  [
    'doctor (examples/shared-cluster-broken.json)',
    () =>
      JSON.parse(readFileSync(join(repoRoot, 'examples', 'shared-cluster-broken.json'), 'utf8')) as object,
  ],
  ['why POD (examples/why/pending.json)', () => whyFacts('pending.json')],
  ['why node (examples/why/nodes.json)', () => whyFacts('nodes.json')],
] as const)
  test(`${name}: a saved snapshot keeps planted free text only where a judgement reads it`, async () => {
    const { facts: planted, planted: count } = plant(facts())
    assert.ok(count >= 10, `free text planted in ${count} fields`)
    const found = survivors(await saved(name.replace(/\W+/g, '-'), planted))
    assert.deepEqual(unjudged(found), [], 'free text kept where nothing judges it')
    // And what is not judged is gone: fewer survivors than plants.
    assert.ok(found.length < count, `${found.length} of ${count} kept`)
  })

test("keepJudged: userData and an EC2NodeClass's tags are left out, annotations and env keep their judged keys, values stay whole", () => {
  const f = healthyFacts((f) => {
    assert.ok(f.kube.nodeClasses.ok && f.kube.deployment.ok && f.kube.deployment.value && f.kube.release.ok)
    const nc = f.kube.nodeClasses.value[0]!
    Object.assign(nc.spec, { userData: 'echo hunter2', tags: { team: 'a', owner: 'b' } })
    nc.metadata.annotations = {
      'karpenter.k8s.aws/ec2nodeclass-hash': '123',
      'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{"userData":"hunter2"}}',
      'vendor.example/token': 'hunter2',
    }
    f.kube.deployment.value.env = {
      FEATURE_GATES: 'NodeOverlay=true',
      HTTPS_PROXY: 'http://u:hunter2@p',
      INTERRUPTION_QUEUE: 'q',
    }
    f.kube.release.value!.values = { extra: { note: 'kept: the values lint reads the whole tree' } }
  })
  const kept = keepJudged(f)
  assert.ok(kept.kube.nodeClasses.ok && kept.kube.deployment.ok && kept.kube.release.ok)
  const nc = kept.kube.nodeClasses.value[0]!
  assert.equal('userData' in nc.spec, false)
  assert.equal('tags' in nc.spec, false)
  assert.deepEqual(nc.metadata.annotations, { 'karpenter.k8s.aws/ec2nodeclass-hash': '123' })
  assert.deepEqual(kept.kube.deployment.value?.env, {
    FEATURE_GATES: 'NodeOverlay=true',
    INTERRUPTION_QUEUE: 'q',
  })
  assert.deepEqual(kept.kube.release.value?.values, {
    extra: { note: 'kept: the values lint reads the whole tree' },
  })
  assert.ok(
    f.kube.nodeClasses.ok && 'userData' in f.kube.nodeClasses.value[0]!.spec,
    'the facts themselves are not changed',
  )
  assert.doesNotMatch(JSON.stringify(kept), /hunter2/)
})

test('a saved snapshot judges as the facts it was saved from (nothing a check reads was left out)', async () => {
  for (const facts of [
    healthyFacts(),
    JSON.parse(readFileSync(join(repoRoot, 'examples', 'shared-cluster-broken.json'), 'utf8')),
  ]) {
    const path = join(dir, 'replay.json')
    await saveSnapshot(path, facts)
    const status = (f: typeof facts) =>
      runChecks(catalog, f).map(
        (r) => `${r.meta.id}: ${r.status} ${JSON.stringify(r.findings.map((x) => x.message))}`,
      )
    assert.deepEqual(status(await loadSnapshot(path)), status(facts))
  }
})

test('FREE_TEXT: every entry that keeps a map names what judges it; the judged annotations are the ones checks read', () => {
  for (const f of FREE_TEXT) if (f.keys) assert.ok(f.judgedBy, f.path)
  const expected: Record<string, boolean> = {
    'eks.amazonaws.com/role-arn': true,
    'karpenter.sh/do-not-disrupt': true,
    'storageclass.kubernetes.io/is-default-class': true,
    'karpctl.io/scaled-down-from-replicas': true,
    'kubectl.kubernetes.io/last-applied-configuration': false,
    'vault.hashicorp.com/agent-inject-token': false,
  }
  for (const [key, judged] of Object.entries(expected)) assert.equal(judgedAnnotation(key), judged, key)
})
