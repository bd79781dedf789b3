// A Kubernetes object karpctl owns (EC2NodeClass, NodePool), written with server-side apply as field
// manager `karpctl`: a re-run sets the same fields, and fields other managers own are left alone.
import { contains } from '../compare.js'
import type { FieldChange, Resource } from '../types.js'
import { createdSettings } from './kube-settings.js'
import type { KubeObject } from './kube-shape.js'
import { droppedFields } from './managed-fields.js'

export type { KubeObject } from './kube-shape.js'

export function objectPath(o: KubeObject): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion]
  const plural = `${o.kind.toLowerCase()}${o.kind.endsWith('s') ? 'es' : 's'}`
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : ''
  return `${base}${ns}/${plural}/${o.metadata.name}`
}

const keptNote = (k: string, v: string) =>
  `not karpctl's (no ${k}=${v} label): used as it is, never changed or deleted by karpctl`

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * The fields of `want` the live object lacks or holds otherwise, each with the live value and the
 * desired one: a reviewer sees what an update overwrites, as an IAM update shows its documents.
 */
export function fieldChanges(have: unknown, want: Record<string, unknown>, prefix = ''): FieldChange[] {
  const out: FieldChange[] = []
  for (const [k, to] of Object.entries(want)) {
    const from = isMap(have) ? have[k] : undefined
    if (contains(from, to)) continue
    if (isMap(to) && isMap(from)) out.push(...fieldChanges(from, to, `${prefix}${k}.`))
    else out.push({ field: `${prefix}${k}`, from, to })
  }
  return out
}

export function kubeObject(w: {
  address: string
  object: KubeObject
  ownerLabel: [string, string]
  adopt: boolean
  dependsOn: string[]
}): Resource<KubeObject> {
  const path = objectPath(w.object)
  return {
    address: w.address,
    kind: w.object.kind,
    name: w.object.metadata.name,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: w.object as unknown as Record<string, unknown>,
    documents: { [w.object.kind]: w.object },
    permissions: [],
    observe: ({ kube }) => kube.get<KubeObject>(path),
    verdict(cur) {
      if (!cur) return { action: 'create', changes: createdSettings(w.object) }
      const [k, v] = w.ownerLabel
      if (cur.metadata.labels?.[k] !== v) {
        // Another tool's object: in use, so kept exactly as it is. Server-side apply would change its
        // spec with no record to give back (a pinned AMI moved to @latest), and a label would make it
        // karpctl's to delete.
        if (w.adopt) return { action: 'unchanged', changes: [], note: keptNote(k, v) }
        return {
          action: 'update',
          changes: [],
          blocked: `exists and was not made by karpctl (no ${k}=${v} label): pass --adopt to install beside it (it is then used as it is), or remove it`,
        }
      }
      const changes = [
        ...fieldChanges(cur, {
          metadata: { labels: w.object.metadata.labels ?? {} },
          spec: w.object.spec ?? {},
        }),
        // What karpctl applied before and no longer does: the apply removes it, so the plan says so.
        ...droppedFields(cur, w.object),
      ]
      return { action: changes.length ? 'update' : 'unchanged', changes }
    },
    async apply({ kube }, cur) {
      if (cur && cur.metadata.labels?.[w.ownerLabel[0]] !== w.ownerLabel[1]) return
      await kube.apply(path, w.object)
    },
  }
}
