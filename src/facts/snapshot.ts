// A snapshot is input, not trusted data: a file from a ticket, edited by hand, made by another karpctl,
// or made to hurt. Before any check sees one it must be a regular file of bounded size, JSON of bounded
// nesting, of this snapshot version, and match the schema generated from the `Facts` type
// (schema/facts.schema.json); each refusal is one line naming the file and, for content, the JSON path.
import { open } from 'node:fs/promises'
import type { ErrorObject } from 'ajv'
import { InputError, quote } from '../errors.js'
import { writeFileAtomic } from '../fs/atomic-write.js'
import { redact, redactClip } from '../redact/redact.js'
import { keepJudged } from './free-text.js'
import type { Facts } from './types.js'

const VERSION = 1
const SCHEMA = `karpctl.facts/v${VERSION}`

/** Larger files are refused before they are read (a live snapshot is well under 1 MiB). */
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
/** Deeper nesting is refused on load and on save (a live snapshot nests about 15 levels). */
export const MAX_SNAPSHOT_DEPTH = 64

const RESAVE = 'save a new one with `karpctl doctor --save-snapshot`'

/**
 * Writes any snapshot (doctor's facts, why's facts): only the free text a judgement reads (free-text.ts),
 * redacted, bounded in depth, atomically.
 */
export async function saveSnapshot(path: string, facts: object): Promise<void> {
  const deep = tooDeep(facts, MAX_SNAPSHOT_DEPTH)
  if (deep)
    throw new InputError(
      `--save-snapshot ${quote(path)} not written: the facts nest deeper than ${MAX_SNAPSHOT_DEPTH} levels at ${jsonPath(deep)} (a snapshot that deep could not be read back)`,
      'SNAPSHOT_SAVE_FAILED',
    )
  const text = `${JSON.stringify(redact(keepJudged(facts)), null, 2)}\n`
  try {
    await writeFileAtomic(path, text)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT'
        ? 'its directory does not exist'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : code === 'ENOSPC'
              ? 'no space left on the device'
              : (code ?? String(err))
    throw new InputError(
      `--save-snapshot ${quote(path)} could not be written: ${why}`,
      'SNAPSHOT_SAVE_FAILED',
    )
  }
}

export async function loadSnapshot(path: string): Promise<Facts> {
  return parseSnapshot(await readSnapshotFile(path), path)
}

/** A snapshot file's text: a regular file of at most MAX_SNAPSHOT_BYTES, or one line saying why not. */
export async function readSnapshotFile(path: string): Promise<string> {
  let text: string
  const file = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new InputError(
      err.code === 'ENOENT'
        ? `snapshot ${quote(path)} does not exist: check the path`
        : `cannot read snapshot ${quote(path)}: ${err.code === 'EISDIR' ? 'it is a directory' : (err.code ?? String(err))}`,
      'SNAPSHOT_UNREADABLE',
    )
  })
  try {
    // The size is judged on the open file, before reading it whole: a 600 MB file would not fit a string.
    const info = await file.stat()
    if (!info.isFile())
      throw new InputError(
        `cannot read snapshot ${quote(path)}: ${info.isDirectory() ? 'it is a directory' : 'it is not a regular file'}`,
        'SNAPSHOT_UNREADABLE',
      )
    if (info.size > MAX_SNAPSHOT_BYTES)
      throw new InputError(
        `snapshot ${quote(path)} is ${mib(info.size)}, over the ${mib(MAX_SNAPSHOT_BYTES)} a snapshot may be: ${RESAVE}`,
        'SNAPSHOT_TOO_LARGE',
      )
    const bytes = await file.readFile()
    // A file that grew after the check is judged by what was read.
    if (bytes.length > MAX_SNAPSHOT_BYTES)
      throw new InputError(
        `snapshot ${quote(path)} is over the ${mib(MAX_SNAPSHOT_BYTES)} a snapshot may be`,
        'SNAPSHOT_TOO_LARGE',
      )
    // karpctl writes UTF-8: bytes that are not (a file cut mid-character, another encoding, binary) would
    // be read with U+FFFD in their place and judged as if they were what the snapshot said.
    const bad = invalidUtf8At(bytes)
    if (bad !== undefined)
      throw new InputError(
        `snapshot ${quote(path)} is not UTF-8 text (an invalid byte at offset ${bad}): ${RESAVE}`,
        'SNAPSHOT_CORRUPT',
      )
    text = bytes.toString('utf8')
  } catch (err) {
    if (err instanceof InputError) throw err
    throw new InputError(
      `cannot read snapshot ${quote(path)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      'SNAPSHOT_UNREADABLE',
    )
  } finally {
    await file.close()
  }
  return text
}

/** The offset of the first byte that is not valid UTF-8, or undefined when all of it is. */
export function invalidUtf8At(bytes: Uint8Array): number | undefined {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return undefined
  } catch {
    // Rare: find where, by decoding ever longer prefixes (a binary search over the byte length).
    let lo = 0
    let hi = bytes.length
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (decodesUpTo(bytes.subarray(0, mid))) lo = mid
      else hi = mid - 1
    }
    if (lo < bytes.length) return lo
    // All of it decodes but for the end: a character cut short there; where it starts.
    while (lo > 0 && (bytes[lo - 1]! & 0xc0) === 0x80) lo--
    return Math.max(0, lo - 1)
  }
}

/** Whether `bytes` is valid UTF-8 but for a character its end cuts short. */
function decodesUpTo(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true })
    return true
  } catch {
    return false
  }
}

export async function parseSnapshot(text: string, path: string): Promise<Facts> {
  const name = quote(path)
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (err) {
    throw new InputError(
      `snapshot ${name} is not valid JSON (${(err as Error).message}): ${RESAVE}`,
      'SNAPSHOT_CORRUPT',
    )
  }
  const schema =
    data && typeof data === 'object' && !Array.isArray(data)
      ? (data as { schema?: unknown }).schema
      : undefined
  const version = typeof schema === 'string' ? /^karpctl\.facts\/v(\d+)$/.exec(schema) : null
  if (version && version[1] !== String(VERSION))
    throw new InputError(
      `snapshot ${name} is an unsupported snapshot version v${version[1]} (this karpctl reads v${VERSION}): save it again with this karpctl's \`doctor --save-snapshot\`, or judge it with the karpctl that made it`,
      'SNAPSHOT_VERSION',
    )
  if (schema !== SCHEMA)
    throw new InputError(
      `${name} is not a karpctl snapshot (expected "schema": "${SCHEMA}"): save one with \`karpctl doctor --save-snapshot\``,
      'SNAPSHOT_SCHEMA',
    )
  const deep = tooDeep(data, MAX_SNAPSHOT_DEPTH)
  if (deep)
    throw new InputError(
      `snapshot ${name} nests deeper than ${MAX_SNAPSHOT_DEPTH} levels at ${jsonPath(deep)}: ${RESAVE}`,
      'SNAPSHOT_TOO_DEEP',
    )
  const { validate } = await import('./facts-validator.js')
  if (!validate(data))
    throw new InputError(
      `snapshot ${name} does not match the ${SCHEMA} schema: ${describe(validate.errors ?? [], data)}; ${RESAVE}`,
      'SNAPSHOT_INVALID',
    )
  return data as Facts
}

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`

/**
 * The path to the first value nested deeper than `limit` containers (the top object is level 1), or
 * null. A loop with its own stack, not recursion: a 100 000-deep value must not overflow the call stack.
 */
export function tooDeep(value: unknown, limit: number): (string | number)[] | null {
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }]
  while (stack.length > 0) {
    const { v, path } = stack.pop() as { v: unknown; path: (string | number)[] }
    if (!v || typeof v !== 'object') continue
    if (path.length >= limit) return path
    if (Array.isArray(v)) v.forEach((x, i) => stack.push({ v: x, path: [...path, i] }))
    else for (const [k, x] of Object.entries(v)) stack.push({ v: x, path: [...path, k] })
  }
  return null
}

/** `$.kube.release.value["odd key"][0]`; a very long path keeps its head and tail. */
export function jsonPath(path: (string | number)[]): string {
  const seg = (p: string | number) =>
    typeof p === 'number' ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${quote(p)}]`
  const parts = path.map(seg)
  return `$${parts.length > 12 ? `${parts.slice(0, 8).join('')}…(${parts.length - 10} more)…${parts.slice(-2).join('')}` : parts.join('')}`
}

const pointerPath = (pointer: string): string[] =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))

/** A JSON pointer's segments, with those that index an array as numbers (`[0]`, not `["0"]`). */
function indexed(data: unknown, segments: string[]): (string | number)[] {
  let v = data
  return segments.map((s) => {
    const seg = Array.isArray(v) && /^\d+$/.test(s) ? Number(s) : s
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[s] : undefined
    return seg
  })
}

function at(data: unknown, path: (string | number)[]): unknown {
  let v = data
  for (const p of path)
    v = v && typeof v === 'object' ? (v as Record<string | number, unknown>)[p] : undefined
  return v
}

function kindOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'object') return 'an object'
  if (typeof v === 'string') return `a string (${quote(redactClip(v, 41))})`
  return `${typeof v === 'number' ? 'a number' : typeof v === 'boolean' ? 'a boolean' : typeof v} (${String(v)})`
}

const article = (t: string) =>
  t === 'null' ? 'null' : t === 'array' || t === 'object' || t === 'integer' ? `an ${t}` : `a ${t}`

/**
 * The error a person can act on. A `Read` is checked on its `ok` first (the schema's if/then/else,
 * see scripts/facts-schema.ts); in the other unions (`'*' | Record<…>`, `T | null`) ajv reports each
 * case: one whose constant did not match is the wrong case, so its errors are dropped, and of the rest
 * the deepest names the value that is wrong.
 */
export function describe(errors: ErrorObject[], data: unknown): string {
  const wrongBranch = new Set<string>()
  for (const e of errors) {
    if (e.keyword !== 'const' && e.keyword !== 'enum') continue
    const m = /^(.*\/anyOf\/\d+)\//.exec(e.schemaPath)
    if (m) wrongBranch.add(`${m[1]}/`)
  }
  const relevant = errors.filter(
    (e) => e.keyword !== 'anyOf' && ![...wrongBranch].some((b) => e.schemaPath.startsWith(b)),
  )
  const pool = relevant.length > 0 ? relevant : errors.filter((e) => e.keyword !== 'anyOf')
  const depth = (e: ErrorObject) => pointerPath(e.instancePath).length
  const e = [...(pool.length > 0 ? pool : errors)].sort((a, b) => depth(b) - depth(a))[0]
  if (!e) return 'it is not a valid snapshot'
  const path = indexed(data, pointerPath(e.instancePath))
  const where = jsonPath(path)
  const value = at(data, path)
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'required':
      return `${where} lacks ${quote(String(p.missingProperty))}`
    case 'type': {
      // `RoleFacts | null`: each case of the union said what it wanted at this path.
      const wanted = pool
        .filter((x) => x.keyword === 'type' && x.instancePath === e.instancePath)
        .flatMap((x) => String((x.params as { type: unknown }).type).split(','))
      return `${where} is ${kindOf(value)}, expected ${[...new Set(wanted)].map(article).join(' or ')}`
    }
    case 'const':
      return `${where} is ${kindOf(value)}, expected ${JSON.stringify(p.allowedValue)}`
    case 'enum':
      return `${where} is ${kindOf(value)}, expected one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    default:
      return `${where} ${e.message ?? 'is not valid'}`
  }
}
