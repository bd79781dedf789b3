import assert from 'node:assert/strict'
import { closeSync, mkdtempSync, openSync, readFileSync, statSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { KarpctlError } from '../../../src/errors.js'
import { redact } from '../../../src/redact/redact.js'
import {
  invalidUtf8At,
  jsonPath,
  loadSnapshot,
  MAX_SNAPSHOT_BYTES,
  MAX_SNAPSHOT_DEPTH,
  parseSnapshot,
  saveSnapshot,
  tooDeep,
} from '../../../src/facts/snapshot.js'
import type { Facts } from '../../../src/facts/types.js'
import { factsSchemaText, FACTS_SCHEMA_PATH } from '../../../scripts/facts-schema.js'
import { healthyFacts } from '../../helpers/facts.js'

const dir = mkdtempSync(join(tmpdir(), 'karpctl-snapshot-'))

// A hand-edited file can hold anything anywhere: the edits below are untyped on purpose.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Edited = any

/** The healthy facts as JSON text, changed by `edit` (on a plain copy, as a hand-edited file would be). */
function text(edit: (f: Edited) => void = () => {}): string {
  const f = JSON.parse(JSON.stringify(healthyFacts())) as Edited
  edit(f)
  return JSON.stringify(f)
}

/** A value nested `depth` objects deep, built without recursion; as JSON text, also without it. */
const deepText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
function deepValue(depth: number): Record<string, unknown> {
  const top: Record<string, unknown> = {}
  let cur = top
  for (let i = 1; i < depth; i++) cur = (cur.a = {}) as Record<string, unknown>
  return top
}

const refused = (re: RegExp, code?: string) => (e: unknown) => {
  assert.ok(e instanceof KarpctlError, String(e))
  assert.match(e.message, re)
  assert.ok(!e.message.includes('\n'), 'one line')
  if (code) assert.equal(e.code, code)
  return true
}

test('save then load round-trips the facts, redacted', async () => {
  const facts = healthyFacts((f) => {
    if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.values.token = 'hunter2'
  })
  await saveSnapshot(join(dir, 's.json'), facts)
  assert.ok(!readFileSync(join(dir, 's.json'), 'utf8').includes('hunter2'))
  const back = await loadSnapshot(join(dir, 's.json'))
  assert.equal(back.meta.clusterName, 'demo')
})

test('corrupt and foreign files are one-line input errors', async () => {
  await assert.rejects(parseSnapshot('{"schema":', 'x.json'), refused(/not valid JSON/, 'SNAPSHOT_CORRUPT'))
  await assert.rejects(
    parseSnapshot('{"a":1}', 'x.json'),
    refused(/not a karpctl snapshot/, 'SNAPSHOT_SCHEMA'),
  )
  await assert.rejects(parseSnapshot('[1]', 'x.json'), refused(/not a karpctl snapshot/))
  await assert.rejects(
    parseSnapshot('{"schema":"karpctl.facts/v1","meta":{}}', 'x.json'),
    refused(
      /does not match the karpctl\.facts\/v1 schema: \$ lacks "eks"|\$\.meta lacks/,
      'SNAPSHOT_INVALID',
    ),
  )
  await assert.rejects(loadSnapshot('/nonexistent/x.json'), refused(/does not exist/))
  await assert.rejects(loadSnapshot(dir), refused(/it is a directory/, 'SNAPSHOT_UNREADABLE'))
})

test('another snapshot version is named as such, not as "not a karpctl snapshot"', async () => {
  for (const v of ['2', '0', '12']) {
    await assert.rejects(
      parseSnapshot(
        text((f) => (f.schema = `karpctl.facts/v${v}`)),
        'old.json',
      ),
      refused(
        new RegExp(
          `^snapshot "old\\.json" is an unsupported snapshot version v${v} \\(this karpctl reads v1\\)`,
        ),
        'SNAPSHOT_VERSION',
      ),
    )
  }
})

test('wrong content is refused with the JSON path that is wrong and what was expected', async () => {
  const cases: [string, (f: Edited) => void, RegExp][] = [
    ['a section emptied', (f) => (f.kube = {}), /: \$\.kube lacks "release"/],
    ['a section missing', (f) => delete f.iam, /: \$ lacks "iam"/],
    ['notes a string', (f) => (f.meta.notes = 'x'), /\$\.meta\.notes is a string \("x"\), expected an array/],
    ['a failed read without its error', (f) => (f.kube.pods = { ok: false }), /\$\.kube\.pods lacks "error"/],
    ['a read without ok', (f) => (f.kube.pods = { value: [] }), /\$\.kube\.pods lacks "ok"/],
    [
      'ok not a boolean',
      (f) => (f.kube.pods = { ok: 'yes', value: [] }),
      /\$\.kube\.pods\.ok is a string \("yes"\), expected one of true, false/,
    ],
    [
      'a pod list not a list',
      (f) => (f.kube.pods.value = {}),
      /\$\.kube\.pods\.value is an object, expected an array/,
    ],
    [
      'a number where a name goes',
      (f) => (f.kube.nodes.value[0].name = 7),
      /\$\.kube\.nodes\.value\[0\]\.name is a number \(7\), expected a string/,
    ],
    [
      'an enum out of range',
      (f) => (f.iam.controllerIdentity = 'magic'),
      /\$\.iam\.controllerIdentity is a string \("magic"\), expected one of "irsa", "pod-identity", "none"/,
    ],
    [
      'a role keyed by an odd name',
      (f) => (f.iam.roles['my role'] = { ok: true, value: 1 }),
      /\$\.iam\.roles\["my role"\]\.value is a number \(1\), expected an object or null/,
    ],
  ]
  for (const [name, edit, message] of cases) {
    await assert.rejects(parseSnapshot(text(edit), 's.json'), refused(message, 'SNAPSHOT_INVALID'), name)
  }
  // Fields karpctl does not model (a newer collector, a Kubernetes object's extra fields) are kept.
  const extra = await parseSnapshot(
    text((f) => (f.kube.extra = { anything: true })),
    's.json',
  )
  assert.equal((extra.kube as unknown as Record<string, unknown>).extra !== undefined, true)
})

test('both shipped examples match the schema', async () => {
  for (const name of ['healthy.json', 'shared-cluster-broken.json'])
    await loadSnapshot(join('examples', name))
})

test('nesting deeper than the limit is refused on load, without overflowing the stack (100 000 levels)', async () => {
  assert.equal(MAX_SNAPSHOT_DEPTH, 64)
  const deep = text((f) => (f.kube.release.value.values = '__DEEP__')).replace(
    '"__DEEP__"',
    deepText(100_000),
  )
  await assert.rejects(
    parseSnapshot(deep, 'deep.json'),
    refused(
      /nests deeper than 64 levels at \$\.kube\.release\.value\.values\.a\.a.*…\(\d+ more\)…/,
      'SNAPSHOT_TOO_DEEP',
    ),
  )
  // Exactly at the limit is fine; one more is not.
  assert.equal(tooDeep(deepValue(64), 64), null)
  assert.equal(tooDeep(deepValue(65), 64)?.length, 64)
  assert.equal(jsonPath(['kube', 'a b', 0, 'x']), '$.kube["a b"][0].x')
})

test('a file over the size limit is refused before it is read whole', async () => {
  assert.equal(MAX_SNAPSHOT_BYTES, 64 * 1024 * 1024)
  const path = join(dir, 'big.json')
  // Sparse: a file this size costs no disk, and the refusal must come from its size alone.
  const fd = openSync(path, 'w')
  writeSync(fd, '{', MAX_SNAPSHOT_BYTES)
  closeSync(fd)
  assert.equal(statSync(path).size, MAX_SNAPSHOT_BYTES + 1)
  await assert.rejects(
    loadSnapshot(path),
    refused(/is 64 MiB, over the 64 MiB a snapshot may be/, 'SNAPSHOT_TOO_LARGE'),
  )
})

test('--save-snapshot of facts nested deeper than the limit is refused, naming the flag and the path; redact() survives 100 000 levels', async () => {
  const facts = healthyFacts((f) => {
    if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.values = deepValue(100_000)
  })
  const path = join(dir, 'deep-save.json')
  await assert.rejects(
    saveSnapshot(path, facts),
    refused(
      /^--save-snapshot ".*deep-save\.json" not written: the facts nest deeper than 64 levels at \$\.kube\.release\.value\.values\.a/,
      'SNAPSHOT_SAVE_FAILED',
    ),
  )
  assert.throws(() => statSync(path), /ENOENT/)
  // redact() walks values recursively but bounded: a deep value is cut, never a stack overflow.
  assert.doesNotThrow(() => JSON.stringify(redact(facts)))
})

test('a save that cannot be written names the flag, the path and why', async () => {
  await assert.rejects(
    saveSnapshot(join(dir, 'no', 'such', 's.json'), healthyFacts()),
    refused(
      /^--save-snapshot ".*s\.json" could not be written: its directory does not exist$/,
      'SNAPSHOT_SAVE_FAILED',
    ),
  )
  await assert.rejects(saveSnapshot(dir, healthyFacts()), refused(/could not be written: it is a directory/))
})

test('the committed schema/facts.schema.json is the one generated from src/facts/types.ts', () => {
  assert.equal(
    readFileSync(FACTS_SCHEMA_PATH, 'utf8'),
    factsSchemaText(),
    'schema/facts.schema.json is stale: run `npm run schema` and commit it',
  )
})

test('a snapshot written by this karpctl validates, whatever the facts hold that the types allow', async () => {
  const facts: Facts = healthyFacts((f) => {
    f.kube.pods = {
      ok: false,
      error: { code: 'Forbidden', kind: 'denied', message: 'no', read: 'kube:pods' },
    }
  })
  const path = join(dir, 'failed-read.json')
  await saveSnapshot(path, facts)
  const back = await loadSnapshot(path)
  assert.equal(back.kube.pods.ok, false)
})

test('a snapshot that is not UTF-8 is refused in one line naming the offset, never decoded with U+FFFD (issue 36 §4)', async () => {
  assert.equal(invalidUtf8At(Buffer.from('{"name":"ノード"}')), undefined)
  assert.equal(invalidUtf8At(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])), 2)
  assert.equal(invalidUtf8At(Buffer.from([0x41, 0xe2, 0x82])), 1, 'a character cut at the end')
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-utf8-'))
  const path = join(dir, 'latin1.json')
  const fd = openSync(path, 'w')
  writeSync(
    fd,
    Buffer.concat([
      Buffer.from('{"schema":"karpctl.why/v1","note":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ]),
  )
  closeSync(fd)
  await assert.rejects(loadSnapshot(path), (err: KarpctlError) => {
    assert.equal(err.code, 'SNAPSHOT_CORRUPT')
    assert.match(err.message, /^snapshot ".*latin1\.json" is not UTF-8 text \(an invalid byte at offset 39\)/)
    return true
  })
})
