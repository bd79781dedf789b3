// The one shape guard of the read layer: what a server answered is checked where it is read, so a
// list that is an object, a name that is a number or a `null` where Kubernetes always sends an object
// becomes one line naming the server, the path and what came — never a `TypeError … is not a function`
// deep in a check, and never an empty list judged as a fact ("nothing is Pending there").
import { clip, markAnswer } from '../errors.js'
import { redactText } from '../redact/redact.js'

/** An answer of the wrong shape. A plain Error (a read captures it as data); its line ends the run when nothing does. */
export class BadAnswer extends Error {
  override name = 'BadAnswer'
  constructor(message: string) {
    super(message)
    markAnswer(this, { line: message, code: 'BAD_ANSWER' })
  }
}

/** What a value is, in a few words, for a message (a string's text redacted and clipped). */
export function shapeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return `a list of ${value.length}`
  if (typeof value === 'string') return `the text "${clip(redactText(value), 40)}"`
  if (typeof value === 'object') return 'an object'
  return `the ${typeof value} ${clip(String(value), 40)}`
}

/** `value` as a list (absent or null: empty); anything else is a BadAnswer `said() + what came`. */
export function listOf<T>(value: T[] | undefined | null, said: () => string): T[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw new BadAnswer(`${said()} ${shapeOf(value)}, not a list`)
  return value
}

type Want = 'list' | 'object' | 'string' | 'strings' | 'map'

/**
 * Field names whose type is the same in every Kubernetes object karpctl reads (core, apps, CRDs,
 * Karpenter's, admission webhooks): `items` of a List, ObjectMeta's, and the lists a check walks.
 * `map` is an object of strings (labels, annotations); `strings` a list of strings. Null is what Go
 * writes for an empty slice or map without omitempty: allowed everywhere but `metadata`.
 */
const KUBE_FIELDS: Record<string, Want> = {
  items: 'list',
  metadata: 'object',
  spec: 'object',
  labels: 'map',
  annotations: 'map',
  name: 'string',
  namespace: 'string',
  uid: 'string',
  kind: 'string',
  apiVersion: 'string',
  resourceVersion: 'string',
  conditions: 'list',
  storedVersions: 'strings',
  finalizers: 'strings',
  ownerReferences: 'list',
  containers: 'list',
  initContainers: 'list',
  containerStatuses: 'list',
  tolerations: 'list',
  taints: 'list',
  requirements: 'list',
  versions: 'list',
  webhooks: 'list',
  subjects: 'list',
}

/** How deep the walk goes: API objects are shallow, a hostile answer may not be. */
const MAX_DEPTH = 64

/**
 * Fields the walk does not enter: maps of free text (checked as maps), opaque data (a Secret's, Helm's
 * values) and a CRD's schema, whose `properties` name `apiVersion`, `metadata` and `items` as schemas
 * (CI of stop 41: every read of Karpenter's real CRDs was refused).
 */
const OPAQUE = new Set([
  'openAPIV3Schema',
  'labels',
  'annotations',
  'data',
  'stringData',
  'values',
  'managedFields',
  'nodeSelector',
  'matchLabels',
  'tags',
])

/**
 * Checks a Kubernetes answer's well-known fields (KUBE_FIELDS) at every depth (to MAX_DEPTH: API objects
 * are shallow, a hostile answer may not be); returns where it is wrong and what came (`items as an
 * object, not a list`), or undefined when it holds. The path is built only for the field that is
 * wrong: a list of 50,000 pods costs a walk, not a string per field.
 */
export function kubeShapeProblem(answer: unknown): string | undefined {
  const found = walk(answer, 0, false)
  if (!found) return undefined
  const path = found.path
    .reverse()
    .reduce((at, seg) => (typeof seg === 'number' ? `${at}[${seg}]` : at ? `${at}.${seg}` : seg), '')
  return `${path} as ${found.problem}`
}

interface Found {
  /** From the field up: keys and list indexes. */
  path: (string | number)[]
  problem: string
}

const grown = (found: Found, seg: string | number): Found => {
  found.path.push(seg)
  return found
}

function walk(value: unknown, depth: number, meta: boolean): Found | undefined {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], depth + 1, false)
      if (found) return grown(found, i)
    }
    return undefined
  }
  const obj = value as Record<string, unknown>
  // ObjectMeta's fields and a typed object's kind/apiVersion are text; elsewhere only `name` is (a
  // field named `kind` inside a spec is whatever its CRD says).
  const typed = meta || 'metadata' in obj
  for (const key in obj) {
    const v = obj[key]
    const want = KUBE_FIELDS[key]
    if (want !== undefined && (want !== 'string' || typed || key === 'name')) {
      const problem = fieldProblem(want, v, key)
      if (problem) return { path: [key], problem }
    }
    if (v === null || typeof v !== 'object' || OPAQUE.has(key)) continue
    const found = walk(v, depth + 1, key === 'metadata')
    if (found) return grown(found, key)
  }
  return undefined
}

function fieldProblem(want: Want, v: unknown, key: string): string | undefined {
  if (v === null) return key === 'metadata' ? 'null, not an object' : undefined
  switch (want) {
    case 'list':
      return Array.isArray(v) ? undefined : `${shapeOf(v)}, not a list`
    case 'strings':
      if (!Array.isArray(v)) return `${shapeOf(v)}, not a list`
      return v.every((s) => typeof s === 'string') ? undefined : 'a list with an item that is not text'
    case 'object':
      return isObject(v) ? undefined : `${shapeOf(v)}, not an object`
    case 'map':
      if (!isObject(v)) return `${shapeOf(v)}, not an object`
      return Object.values(v).every((s) => typeof s === 'string')
        ? undefined
        : 'an object with a value that is not text'
    case 'string':
      return typeof v === 'string' ? undefined : `${shapeOf(v)}, not text`
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
