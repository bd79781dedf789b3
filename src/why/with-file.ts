// `--with FILE`: judge as if the NodePool and EC2NodeClass manifests in FILE were applied. Each object
// replaces the live one of its name (or is added); the live status stays (the file has none: Karpenter
// resolves it after apply). A changed NodePool template moves the NodePool's hash as Karpenter's would
// (NodePool.Hash covers spec.template but its requirements — sigs.k8s.io/karpenter pkg/apis/v1
// nodepool.go), so its nodes judge as drifted, naming the fields that changed.
import { readFile } from 'node:fs/promises'
import { parseAllDocuments } from 'yaml'
import { InputError, quote } from '../errors.js'
import type { EC2NodeClass, Facts, NodePool, ObjectMeta } from '../facts/types.js'

const NODEPOOL_HASH = 'karpenter.sh/nodepool-hash'
const NODECLASS_HASH = 'karpenter.k8s.aws/ec2nodeclass-hash'

export interface WithManifests {
  file: string
  nodePools: NodePool[]
  nodeClasses: EC2NodeClass[]
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The manifests of FILE, or one line naming what is wrong with it. */
export async function loadWith(file: string): Promise<WithManifests> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new InputError(
      `--with ${quote(file)} cannot be read (${err.code ?? err.message}): pass a YAML file of NodePools and EC2NodeClasses`,
      'INVALID_INPUT',
    )
  })
  const out: WithManifests = { file, nodePools: [], nodeClasses: [] }
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length)
      throw new InputError(
        `--with ${quote(file)} document ${i + 1} is not valid YAML (${doc.errors[0]?.message.split('\n')[0]})`,
        'INVALID_INPUT',
      )
    const o: unknown = doc.toJS()
    if (o === null || o === undefined) return
    const name = isObj(o) && isObj(o.metadata) ? o.metadata.name : undefined
    if (!isObj(o) || typeof name !== 'string' || !isObj(o.spec))
      throw new InputError(
        `--with ${quote(file)} document ${i + 1} has no metadata.name or spec`,
        'INVALID_INPUT',
      )
    if (o.kind === 'NodePool' && o.apiVersion === 'karpenter.sh/v1') {
      const template = (o.spec as Obj).template
      if (!isObj(template) || !isObj(template.spec))
        throw new InputError(
          `--with ${quote(file)} NodePool ${name} has no spec.template.spec`,
          'INVALID_INPUT',
        )
      out.nodePools.push(o as unknown as NodePool)
    } else if (o.kind === 'EC2NodeClass' && o.apiVersion === 'karpenter.k8s.aws/v1')
      out.nodeClasses.push(o as unknown as EC2NodeClass)
    else
      throw new InputError(
        `--with ${quote(file)} document ${i + 1} is ${String(o.apiVersion)} ${String(o.kind)}: only karpenter.sh/v1 NodePool and karpenter.k8s.aws/v1 EC2NodeClass are judged`,
        'INVALID_INPUT',
      )
  })
  if (!out.nodePools.length && !out.nodeClasses.length)
    throw new InputError(`--with ${quote(file)} holds no NodePool or EC2NodeClass`, 'INVALID_INPUT')
  return out
}

/** Canonical JSON: keys sorted, so two equal specs compare equal whatever their order. */
const canon = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canon).join(',')}]`
    : isObj(v)
      ? `{${Object.keys(v)
          .sort()
          .filter((k) => v[k] !== undefined && v[k] !== null)
          .map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
          .join(',')}}`
      : JSON.stringify(v)

/** The fields (dotted paths, one level into each object) that differ between two values. */
export function changedFields(a: unknown, b: unknown, path: string, skip: string[] = []): string[] {
  if (canon(a) === canon(b)) return []
  if (!isObj(a) || !isObj(b)) return [path]
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((k) => !skip.includes(`${path}.${k}`))
    .sort()
  const out = keys.flatMap((k) => (canon(a[k]) === canon(b[k]) ? [] : [`${path}.${k}`]))
  return out
}

const annotate = <T extends { metadata: { annotations?: Record<string, string> } }>(
  o: T,
  key: string,
  value: string,
): T => ({
  ...o,
  metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [key]: value } },
})

type Kube = { metadata: ObjectMeta; status?: unknown }

/**
 * Each incoming object over the live one of its name (or added): the live status and annotations kept,
 * the hash annotation moved when `moved` names fields that changed.
 */
function overlay<T extends Kube>(
  live: T[],
  incoming: T[],
  hash: string,
  file: string,
  moved: (was: T, now: T) => string[],
): T[] {
  const out = [...live]
  for (const obj of incoming) {
    const i = out.findIndex((o) => o.metadata.name === obj.metadata.name)
    const was = out[i]
    let next = {
      ...obj,
      metadata: { ...obj.metadata, annotations: { ...was?.metadata.annotations } },
      ...(was?.status ? { status: was.status } : {}),
    } as T
    const fields = was ? moved(was, obj) : []
    if (was?.metadata.annotations?.[hash] && fields.length)
      next = annotate(next, hash, `(changed by ${file}: ${fields.join(', ')})`)
    if (i >= 0) out[i] = next
    else out.push(next)
  }
  return out
}

const REQUIREMENTS = ['spec.template.spec.requirements']
/** Selector terms drift through what they resolve to (AMIDrift, SubnetDrift…), known only after apply. */
const SELECTORS = [
  'spec.subnetSelectorTerms',
  'spec.securityGroupSelectorTerms',
  'spec.amiSelectorTerms',
  'spec.capacityReservationSelectorTerms',
]

/** The live Kubernetes facts with the manifests applied over them (a new object; `kube` is not changed). */
export function applyWith(kube: Facts['kube'], w: WithManifests): Facts['kube'] {
  const pools = overlay<NodePool>(
    kube.nodePools.ok ? kube.nodePools.value : [],
    w.nodePools,
    NODEPOOL_HASH,
    w.file,
    (was, now) => [
      ...changedFields(was.spec.template, now.spec.template, 'spec.template', REQUIREMENTS).filter(
        (f) => f !== 'spec.template.spec',
      ),
      ...changedFields(was.spec.template.spec, now.spec.template.spec, 'spec.template.spec', REQUIREMENTS),
    ],
  )
  const classes = overlay<EC2NodeClass>(
    kube.nodeClasses.ok ? kube.nodeClasses.value : [],
    w.nodeClasses,
    NODECLASS_HASH,
    w.file,
    (was, now) => changedFields(was.spec, now.spec, 'spec', SELECTORS),
  )
  return {
    ...kube,
    nodePools: kube.nodePools.ok ? { ok: true, value: pools } : kube.nodePools,
    nodeClasses: kube.nodeClasses.ok ? { ok: true, value: classes } : kube.nodeClasses,
  }
}
