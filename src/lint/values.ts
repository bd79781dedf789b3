// Lints Karpenter Helm values for the value-type trap: Kubernetes wants every annotation, label,
// nodeSelector and toleration value to be a string, but `--set key=true`, an unquoted `true`/`1`
// in values.yaml, or a Terraform `set` without `type = "string"` hands Helm a boolean or a number.
// The chart renders it with toYaml and the API server rejects the object
// ("cannot unmarshal bool into Go struct field ... of type string"), or Helm fails the upgrade.
// One pure walker (`lintHelmValues`) serves the doctor check, the values-file lint and the Terraform lint.
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Document, LineCounter, Node } from 'yaml'
import { InputError, quote } from '../errors.js'
import { redactText } from '../redact/redact.js'

export type KeyPath = (string | number)[]

export interface LintIssue {
  /** The path as Helm's --set syntax spells it: `tolerations[0].value`, `podAnnotations.eks\.amazonaws\.com/x`. */
  path: string
  /** The same path as segments (map keys and list indexes). */
  keyPath: KeyPath
  /** The offending value as Helm would see it. */
  value: unknown
  valueType: string
  /** Where the values came from: `release values`, a file name, `main.tf helm_release.karpenter`. */
  source: string
  /** The string the user almost certainly meant (the value as written, quoted). */
  stringValue: string
  message: string
  /** One line: how to make it a string. */
  fix: string
  file?: string
  line?: number
}

/** Map-valued keys of the Karpenter chart whose entries end up as Kubernetes string maps. */
export const STRING_MAP_PATHS: KeyPath[] = [
  ['podAnnotations'],
  ['podLabels'],
  ['additionalAnnotations'],
  ['additionalLabels'],
  ['nodeSelector'],
  ['serviceAccount', 'annotations'],
  ['service', 'annotations'],
  ['serviceMonitor', 'additionalLabels'],
]

/** Walks the values Helm will render and reports every non-string annotation/label/toleration value. */
export function lintHelmValues(values: unknown, source: string): LintIssue[] {
  if (!isRecord(values)) return []
  const issues: LintIssue[] = []
  const tolerations = values.tolerations
  if (Array.isArray(tolerations)) {
    tolerations.forEach((t, i) => {
      if (isRecord(t) && 'value' in t) check(['tolerations', i, 'value'], t.value)
    })
  }
  for (const mapPath of STRING_MAP_PATHS) {
    const map = at(values, mapPath)
    if (!isRecord(map)) continue
    for (const [key, v] of Object.entries(map)) check([...mapPath, key], v)
  }
  return issues

  function check(keyPath: KeyPath, value: unknown) {
    const type = valueType(value)
    // null is fine: in user values it deletes the key; in a toleration it means "no value".
    if (type === 'string' || type === 'null' || type === 'undefined') return
    issues.push(makeIssue(keyPath, value, source))
  }
}

export function makeIssue(keyPath: KeyPath, value: unknown, source: string, written?: string): LintIssue {
  const path = helmPath(keyPath)
  const type = valueType(value)
  const stringValue =
    written ?? (type === 'object' || type === 'array' ? JSON.stringify(value) : String(value))
  return {
    path,
    keyPath,
    value,
    valueType: type,
    source,
    stringValue,
    message: `${path} = ${JSON.stringify(value)} (${type}) in ${source}: Kubernetes needs a string here`,
    fix: `quote it in YAML (${yamlKey(keyPath)}: ${JSON.stringify(stringValue)}) or pass it with --set-string ${shellArg(`${path}=${helmSetValue(stringValue)}`)}`,
  }
}

/**
 * Reads a local values file and lints it. YAML is read with the 1.1 schema because Helm does
 * (sigs.k8s.io/yaml over go-yaml v2): there `yes`, `on`, `y` are booleans too.
 * The YAML parser is imported on demand so `doctor` (which only needs the walker) does not load it.
 */
export async function lintValuesFile(path: string): Promise<LintIssue[]> {
  return await lintValuesText(await readTextFile(path, 'values file', 'VALUES_FILE'), path)
}

/** Values files and Terraform files are small; anything larger is not one. */
export const MAX_LINT_FILE_BYTES = 16 << 20

/**
 * A local text file, refused unless it is a regular file (a FIFO would block the run, a directory or a
 * device is not text), at most MAX_LINT_FILE_BYTES, and UTF-8 (Helm and Terraform read UTF-8; a
 * UTF-16 or binary file would otherwise lint as something it is not). `what` and `code` name it.
 */
export async function readTextFile(path: string, what: string, code: string): Promise<string> {
  const fail = (why: string, suffix = 'UNREADABLE') =>
    new InputError(`${what} ${quote(path)} ${why}`, `${code}_${suffix}`)
  let handle
  try {
    // O_NONBLOCK: opening a FIFO with no writer must not block before it can be refused.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code ?? 'EIO'
    throw fail(errno === 'ENOENT' ? 'does not exist: check the path' : `cannot be read (${errno})`)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) {
      const kind = info.isDirectory() ? 'a directory' : info.isFIFO() ? 'a FIFO' : 'not a regular file'
      throw fail(`is ${kind}: pass a YAML file`, 'INVALID')
    }
    if (info.size > MAX_LINT_FILE_BYTES)
      throw fail(
        `is ${Math.round(info.size / 2 ** 20)} MiB: larger than ${MAX_LINT_FILE_BYTES >> 20} MiB, not a ${what}`,
        'INVALID',
      )
    const bytes = await handle.readFile()
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
    } catch {
      throw fail('is not UTF-8 text (binary, or UTF-16?): save it as UTF-8', 'INVALID')
    }
  } catch (err) {
    if (err instanceof InputError) throw err
    throw fail(`cannot be read (${(err as NodeJS.ErrnoException).code ?? 'EIO'})`)
  } finally {
    await handle.close()
  }
}

/** Helm reads aliases; this many expansions is an alias bomb ("billion laughs"), not values. */
const MAX_ALIAS_COUNT = 1_000

/**
 * Lints YAML text; `file` names it in messages. Malformed YAML, a document that is not a map of
 * values (a list, a scalar), and an alias bomb → InputError naming the file.
 */
export async function lintValuesText(text: string, file: string, lineOffset = 0): Promise<LintIssue[]> {
  const { LineCounter, parseDocument, isScalar } = await import('yaml')
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { version: '1.1', lineCounter, uniqueKeys: false })
  const error = doc.errors[0]
  if (error) {
    const line = (error.linePos?.[0]?.line ?? 0) + lineOffset
    const reason =
      error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? 'malformed YAML'
    throw new InputError(`${file}:${line}: invalid YAML: ${reason}`, 'VALUES_FILE_INVALID')
  }
  let values: unknown
  try {
    values = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  } catch (err) {
    if (/alias/i.test((err as Error).message))
      throw new InputError(
        `${file} refused: its YAML aliases expand more than ${MAX_ALIAS_COUNT} times (an alias bomb?)`,
        'VALUES_FILE_INVALID',
      )
    throw new InputError(
      `${file}: invalid YAML: ${(err as Error).message.split('\n')[0]}`,
      'VALUES_FILE_INVALID',
    )
  }
  // An empty file (or only comments) is valid: no values.
  if (values !== null && values !== undefined && !isRecord(values)) {
    const kind = Array.isArray(values)
      ? 'a YAML list'
      : `a ${valueType(values)} (${redactText(JSON.stringify(values)).slice(0, 40)})`
    throw new InputError(`${file} is ${kind}, not a map of Helm values (key: value)`, 'VALUES_FILE_INVALID')
  }
  const issues = lintHelmValues(values, file)
  return issues.map((issue) => locate(issue, doc, lineCounter, file, lineOffset, isScalar))
}

/** Adds file, line and the value as written (e.g. `yes`, `1.50`) from the YAML source. */
function locate(
  issue: LintIssue,
  doc: Document,
  lines: LineCounter,
  file: string,
  lineOffset: number,
  isScalar: typeof import('yaml').isScalar,
): LintIssue {
  const node = doc.getIn(issue.keyPath, true) as Node | undefined
  const out: LintIssue = { ...issue, file }
  if (!node?.range) return out
  out.line = lines.linePos(node.range[0]).line + lineOffset
  if (isScalar(node) && typeof node.source === 'string' && node.source !== '') {
    return { ...makeIssue(issue.keyPath, issue.value, file, node.source), file, line: out.line }
  }
  return out
}

// ---------- helpers shared with the Terraform lint and the doctor check ----------

export function valueType(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  return typeof v
}

/** Helm --set path syntax: dots inside keys are escaped (`eks\.amazonaws\.com/x`), list indexes in brackets. */
export function helmPath(keyPath: KeyPath): string {
  let out = ''
  for (const seg of keyPath) {
    if (typeof seg === 'number') out += `[${seg}]`
    else
      out += `${out === '' ? '' : '.'}${seg.replace(/\\/g, '\\\\').replace(/\./g, '\\.').replace(/,/g, '\\,').replace(/=/g, '\\=')}`
  }
  return out
}

/** Parses Helm's --set key syntax back into segments (`a.b\.c[0].d` → a, b.c, 0, d). */
export function parseHelmPath(path: string): KeyPath {
  const out: KeyPath = []
  let cur = ''
  let pending = false
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string
    if (c === '\\' && i + 1 < path.length) {
      cur += path[++i]
      pending = true
    } else if (c === '.') {
      if (pending || cur !== '') out.push(cur)
      cur = ''
      pending = false
    } else if (c === '[') {
      const end = path.indexOf(']', i)
      if (end < 0) {
        cur += c
        continue
      }
      if (pending || cur !== '') out.push(cur)
      cur = ''
      pending = false
      const idx = path.slice(i + 1, end)
      out.push(/^\d+$/.test(idx) ? Number(idx) : idx)
      i = end
    } else {
      cur += c
      pending = true
    }
  }
  if (pending || cur !== '') out.push(cur)
  return out
}

/** Is this key path one whose value must be a string (toleration value or entry of a string map)? */
export function isStringTarget(keyPath: KeyPath): boolean {
  if (
    keyPath.length === 3 &&
    keyPath[0] === 'tolerations' &&
    typeof keyPath[1] === 'number' &&
    keyPath[2] === 'value'
  )
    return true
  return STRING_MAP_PATHS.some(
    (p) =>
      keyPath.length === p.length + 1 &&
      p.every((seg, i) => keyPath[i] === seg) &&
      typeof keyPath[p.length] === 'string',
  )
}

/**
 * How Helm types a `--set` value (strvals typedVal): true/false/null in any case, and integers
 * without a leading zero (or `0`) are not strings; everything else (floats too) stays a string.
 */
export function helmSetTypedValue(raw: string): unknown {
  const lower = raw.toLowerCase()
  if (lower === 'true') return true
  if (lower === 'false') return false
  if (lower === 'null') return null
  if (raw === '0') return 0
  // Go's ParseInt: an int64, optionally signed; anything larger stays a string.
  if (raw !== '' && raw[0] !== '0' && /^[+-]?\d+$/.test(raw)) {
    const n = BigInt(raw)
    if (n >= -(2n ** 63n) && n < 2n ** 63n) return Number(n)
  }
  return raw
}

/** Escapes a value for --set / --set-string (commas separate assignments; backslash escapes). */
export function helmSetValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/,/g, '\\,')
}

function shellArg(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

function yamlKey(keyPath: KeyPath): string {
  const last = keyPath[keyPath.length - 1]
  return typeof last === 'number' ? `[${last}]` : String(last)
}

function at(values: Record<string, unknown>, path: KeyPath): unknown {
  let cur: unknown = values
  for (const seg of path) {
    if (!isRecord(cur)) return undefined
    cur = cur[seg as string]
  }
  return cur
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/**
 * A small YAML emitter for fix snippets (the `yaml` package is not loaded by doctor): every string is
 * double-quoted, so the snippet can never reintroduce the type trap it fixes.
 */
export function yamlSnippet(value: unknown, indent = 0): string {
  const pad = ' '.repeat(indent)
  if (Array.isArray(value)) {
    if (value.length === 0) return `${pad}[]`
    return value
      .map((item) => {
        const body =
          isRecord(item) || Array.isArray(item) ? yamlSnippet(item, indent + 2).trimStart() : yamlScalar(item)
        return `${pad}- ${body}`
      })
      .join('\n')
  }
  if (isRecord(value)) {
    const entries = Object.entries(value)
    if (entries.length === 0) return `${pad}{}`
    return entries
      .map(([k, v]) => {
        const key =
          /^[A-Za-z_][\w./-]*$/.test(k) && !/^(y|n|yes|no|on|off|true|false|null)$/i.test(k)
            ? k
            : JSON.stringify(k)
        if ((isRecord(v) && Object.keys(v).length > 0) || (Array.isArray(v) && v.length > 0)) {
          return `${pad}${key}:\n${yamlSnippet(v, indent + 2)}`
        }
        return `${pad}${key}: ${isRecord(v) ? '{}' : Array.isArray(v) ? '[]' : yamlScalar(v)}`
      })
      .join('\n')
  }
  return `${pad}${yamlScalar(value)}`
}

function yamlScalar(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  return JSON.stringify(String(v))
}
