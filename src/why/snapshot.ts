// A why snapshot: the facts of one `karpctl why` run (karpctl.why-facts/v1), saved redacted and read
// back as untrusted input: a bounded regular file (doctor's reader), bounded nesting, this version,
// and the shape every judgement relies on, or one line naming the JSON path that is wrong.
import { InputError, quote } from '../errors.js'
import { jsonPath, MAX_SNAPSHOT_DEPTH, readSnapshotFile, saveSnapshot, tooDeep } from '../facts/snapshot.js'
import type { WhyFacts } from './types.js'

export const WHY_FACTS_SCHEMA = 'karpctl.why-facts/v1'

export const saveWhySnapshot = (path: string, facts: WhyFacts) => saveSnapshot(path, facts)

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

type Path = (string | number)[]

/** A Kubernetes object's shape: `metadata.name`. Returns the bad path below the item, or null. */
const kubeObject = (item: unknown): Path | null =>
  isObj(item) && isObj(item.metadata) && typeof item.metadata.name === 'string' ? null : ['metadata', 'name']

/** The first field of an item that is not of its type (the judgement does arithmetic on the numbers). */
const fields =
  (shape: Record<string, 'string' | 'number' | 'strings'>) =>
  (item: unknown): Path | null => {
    if (!isObj(item)) return []
    for (const [k, t] of Object.entries(shape)) {
      const v = item[k]
      const ok =
        t === 'strings'
          ? Array.isArray(v) && v.every((x) => typeof x === 'string')
          : t === 'number'
            ? typeof v === 'number' && Number.isFinite(v) && v >= 0
            : typeof v === 'string'
      if (!ok) return [k]
    }
    return null
  }

/** One trimmed DescribeInstanceTypes entry (why's facts and a node snapshot's). */
export const instanceType = fields({
  name: 'string',
  vcpus: 'number',
  memoryMiB: 'number',
  architectures: 'strings',
  usageClasses: 'strings',
  maxEnis: 'number',
  ipv4PerEni: 'number',
})
const offering = fields({ instanceType: 'string', zone: 'string' })
const schedulingLine = (item: unknown): Path | null => {
  const bad = fields({ time: 'string', pod: 'string' })(item)
  if (bad || !isObj(item)) return bad ?? []
  const pools = item.nodePools
  if (!isObj(pools) || !Object.values(pools).every((v) => typeof v === 'string')) return ['nodePools']
  return item.error === undefined || typeof item.error === 'string' ? null : ['error']
}
const placedPod = (item: unknown): Path | null =>
  fields({ namespace: 'string', nodeName: 'string' })(item) ??
  (isObj((item as Record<string, unknown>).labels) ? null : ['labels'])

const vpcSubnet = (item: unknown): Path | null =>
  fields({ id: 'string', zone: 'string', availableIps: 'number' })(item) ??
  (isObj((item as Record<string, unknown>).tags) &&
  Object.values((item as { tags: Record<string, unknown> }).tags).every((v) => typeof v === 'string')
    ? null
    : ['tags'])

/** A Read of a list (each item of `item`'s shape), or of one value. Returns the bad path or null. */
export function badRead(
  v: unknown,
  path: Path,
  list = true,
  item: (x: unknown) => Path | null = kubeObject,
): Path | null {
  if (!isObj(v) || typeof v.ok !== 'boolean') return path
  if (!v.ok)
    return isObj(v.error) && typeof v.error.message === 'string' && typeof v.error.read === 'string'
      ? null
      : [...path, 'error']
  if (!list) return null
  if (!Array.isArray(v.value)) return [...path, 'value']
  for (const [i, x] of v.value.entries()) {
    const bad = item(x)
    if (bad) return [...path, 'value', i, ...bad]
  }
  return null
}

/** A snapshot file's JSON, any schema: bounded regular file, valid JSON, or one line saying why not. */
export async function readWhyJson(path: string): Promise<unknown> {
  const text = await readSnapshotFile(path)
  try {
    return JSON.parse(text) as unknown
  } catch (err) {
    throw new InputError(
      `snapshot ${quote(path)} is not valid JSON (${(err as Error).message})`,
      'SNAPSHOT_CORRUPT',
    )
  }
}

export async function loadWhySnapshot(path: string): Promise<WhyFacts> {
  return checkWhyFacts(await readWhyJson(path), path)
}

/**
 * A why snapshot's envelope: an object of this schema, nested no deeper than a snapshot may be. `what`
 * names the kind in the one-line error (`why`, `node`).
 */
export function checkEnvelope(
  data: unknown,
  path: string,
  schema: string,
  what: string,
): Record<string, unknown> {
  const name = quote(path)
  if (!isObj(data) || data.schema !== schema)
    throw new InputError(
      `${name} is not a ${what} snapshot (expected "schema": "${schema}"): save one with \`karpctl why … --save-snapshot\``,
      'SNAPSHOT_SCHEMA',
    )
  const deep = tooDeep(data, MAX_SNAPSHOT_DEPTH)
  if (deep)
    throw new InputError(
      `snapshot ${name} nests deeper than ${MAX_SNAPSHOT_DEPTH} levels at ${jsonPath(deep)}`,
      'SNAPSHOT_TOO_DEEP',
    )
  return data
}

/** The pod-side facts' shape, or one line naming the JSON path that is wrong. */
export function checkWhyFacts(raw: unknown, path: string): WhyFacts {
  const name = quote(path)
  const data = checkEnvelope(raw, path, WHY_FACTS_SCHEMA, 'why')
  const meta = data.meta
  let bad: (string | number)[] | null = null
  if (!isObj(meta) || typeof meta.clusterName !== 'string' || typeof meta.region !== 'string') bad = ['meta']
  else if (!isObj(data.kube)) bad = ['kube']
  else {
    const kube = data.kube
    bad =
      badRead(kube.nodePools, ['kube', 'nodePools']) ??
      badRead(kube.nodeClasses, ['kube', 'nodeClasses']) ??
      badRead(kube.deployment, ['kube', 'deployment'], false) ??
      badRead(kube.release, ['kube', 'release'], false)
    for (const k of ['pods', 'nodeClaims', 'daemonSets', 'pvcs', 'pvs', 'storageClasses', 'events'] as const)
      bad ??= badRead(data[k], [k])
    // Absent in a snapshot from before instance types were judged: they are then unknown.
    if (data.instanceTypes !== undefined)
      bad ??= badRead(data.instanceTypes, ['instanceTypes'], true, instanceType)
    if (data.offerings !== undefined) bad ??= badRead(data.offerings, ['offerings'], true, offering)
    if (data.controllerLog !== undefined)
      bad ??= badRead(data.controllerLog, ['controllerLog'], true, schedulingLine)
    if (data.placedPods !== undefined) bad ??= badRead(data.placedPods, ['placedPods'], true, placedPod)
    if (data.subnets !== undefined) bad ??= badRead(data.subnets, ['subnets'], true, vpcSubnet)
  }
  if (bad)
    throw new InputError(
      `snapshot ${name} is not a valid why snapshot at ${jsonPath(bad)}`,
      'SNAPSHOT_INVALID',
    )
  return data as unknown as WhyFacts
}
