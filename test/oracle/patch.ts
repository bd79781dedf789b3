// Applying a printed `kubectl patch` fix to a generated cluster, so that the oracle can be asked whether
// the fix works: the command is parsed as a POSIX shell would (karpctl quotes with shellQuote), and its
// JSON patch (RFC 6902) or merge patch (RFC 7386) is applied to the object it names in the snapshot.
import type { WhyFacts, WorkloadPod } from '../../src/why/types.js'

/** Words of a command line: single and double quotes, backslash escapes. */
export function shellWords(line: string): string[] {
  const out: string[] = []
  let word: string | null = null
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new Error(`unterminated quote in ${line}`)
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (c === '"') {
      let j = i + 1
      let s = ''
      for (; j < line.length && line[j] !== '"'; j++) s += line[j] === '\\' ? (line[++j] ?? '') : line[j]
      word = (word ?? '') + s
      i = j
    } else if (c === '\\') word = (word ?? '') + (line[++i] ?? '')
    else if (/\s/.test(c)) {
      if (word !== null) out.push(word)
      word = null
    } else word = (word ?? '') + c
  }
  if (word !== null) out.push(word)
  return out
}

export interface KubectlPatch {
  namespace?: string
  kind: string
  name: string
  type: 'json' | 'merge'
  patch: unknown
}

/** A `kubectl [-n NS] patch KIND NAME --type json|merge -p PATCH` command, or undefined. */
export function parsePatch(command: string): KubectlPatch | undefined {
  const w = shellWords(command)
  if (w[0] !== 'kubectl') return undefined
  let namespace: string | undefined
  const rest: string[] = []
  let type: string | undefined
  let patch: string | undefined
  for (let i = 1; i < w.length; i++) {
    if (w[i] === '-n' || w[i] === '--namespace') namespace = w[++i]
    else if (w[i] === '--type') type = w[++i]
    else if (w[i] === '-p' || w[i] === '--patch') patch = w[++i]
    else rest.push(w[i] as string)
  }
  const [verb, kind, name] = rest
  if (verb !== 'patch' || !kind || !name || !patch || (type !== 'json' && type !== 'merge')) return undefined
  return { ...(namespace ? { namespace } : {}), kind, name, type, patch: JSON.parse(patch) }
}

type Json = Record<string, unknown> | unknown[]

const unescape = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~')

/** RFC 6902 add / replace / remove (what karpctl prints). */
export function applyJsonPatch(doc: unknown, ops: { op: string; path: string; value?: unknown }[]): void {
  for (const { op, path, value } of ops) {
    const parts = path.split('/').slice(1).map(unescape)
    const last = parts.pop() as string
    let parent = doc as Json
    for (const p of parts) {
      const next = Array.isArray(parent) ? parent[Number(p)] : parent[p]
      if (typeof next !== 'object' || next === null) throw new Error(`patch path ${path} not found`)
      parent = next as Json
    }
    if (Array.isArray(parent)) {
      const i = last === '-' ? parent.length : Number(last)
      if (op === 'add') parent.splice(i, 0, value)
      else if (op === 'replace') parent[i] = value
      else if (op === 'remove') parent.splice(i, 1)
      else throw new Error(`patch op ${op} not supported`)
    } else if (op === 'add' || op === 'replace') parent[last] = value
    else if (op === 'remove') delete parent[last]
    else throw new Error(`patch op ${op} not supported`)
  }
}

/** RFC 7386: null deletes, objects merge, anything else replaces. */
export function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete target[k]
    else if (typeof v === 'object' && !Array.isArray(v)) {
      const t = target[k]
      if (typeof t !== 'object' || t === null || Array.isArray(t)) target[k] = {}
      mergePatch(target[k] as Record<string, unknown>, v as Record<string, unknown>)
    } else target[k] = v
  }
}

/** The pods a workload patch changes: a pod template's spec is the pods' spec. */
function podsOf(facts: WhyFacts, p: KubectlPatch): WorkloadPod[] {
  const pods = facts.pods.ok ? facts.pods.value : []
  const kind = p.kind.toLowerCase()
  return pods.filter((pod) => {
    if ((pod.metadata.namespace ?? 'default') !== (p.namespace ?? 'default')) return false
    if (kind === 'pod') return pod.metadata.name === p.name
    const ref = pod.metadata.ownerReferences?.find((r) => r.controller) ?? pod.metadata.ownerReferences?.[0]
    if (kind === 'replicaset') return ref?.kind === 'ReplicaSet' && ref.name === p.name
    const hash = pod.metadata.labels?.['pod-template-hash']
    return kind === 'deployment' && ref?.kind === 'ReplicaSet' && !!hash && ref.name === `${p.name}-${hash}`
  })
}

/** Applies the patch to the snapshot; false when it names nothing the snapshot holds. */
export function applyPatch(facts: WhyFacts, p: KubectlPatch): boolean {
  const kind = p.kind.toLowerCase()
  const apply = (target: Record<string, unknown>, patch: unknown) =>
    p.type === 'json'
      ? applyJsonPatch(target, patch as { op: string; path: string; value?: unknown }[])
      : mergePatch(target, patch as Record<string, unknown>)
  if (kind === 'nodepool' || kind === 'ec2nodeclass') {
    const list = kind === 'nodepool' ? facts.kube.nodePools : facts.kube.nodeClasses
    const obj = list.ok ? list.value.find((o) => o.metadata.name === p.name) : undefined
    if (!obj) return false
    apply(obj as unknown as Record<string, unknown>, p.patch)
    return true
  }
  const pods = podsOf(facts, p)
  for (const pod of pods) {
    // A workload's patch is on /spec/template/spec; the pod's spec is /spec.
    const shell = kind === 'pod' ? pod : { spec: { template: { spec: pod.spec } } }
    apply(shell as unknown as Record<string, unknown>, p.patch)
    if (kind !== 'pod')
      pod.spec = (shell as { spec: { template: { spec: WorkloadPod['spec'] } } }).spec.template.spec
  }
  return pods.length > 0
}

/** An `aws ec2 create-tags [--region R] --resources ID… --tags JSON` command (what why prints), or undefined. */
export function parseCreateTags(
  command: string,
): { resources: string[]; tags: Record<string, string> } | undefined {
  const w = shellWords(command)
  if (w[0] !== 'aws' || w[1] !== 'ec2' || w[2] !== 'create-tags') return undefined
  const resources: string[] = []
  let tags: { Key: string; Value: string }[] | undefined
  for (let i = 3; i < w.length; i++) {
    if (w[i] === '--region') i++
    else if (w[i] === '--resources')
      while (w[i + 1] && !w[i + 1]?.startsWith('--')) resources.push(w[++i] as string)
    else if (w[i] === '--tags') tags = JSON.parse(w[++i] as string) as { Key: string; Value: string }[]
    else return undefined
  }
  if (!resources.length || !tags?.length) return undefined
  return { resources, tags: Object.fromEntries(tags.map((t) => [t.Key, t.Value])) }
}

/** Tags the snapshot's VPC subnets as EC2 would; false when a resource is not one of them. */
export function applyCreateTags(
  facts: WhyFacts,
  c: { resources: string[]; tags: Record<string, string> },
): boolean {
  const subnets = facts.subnets?.ok ? facts.subnets.value : []
  const found = c.resources.map((id) => subnets.find((s) => s.id === id))
  if (found.some((s) => !s)) return false
  for (const s of found) if (s) s.tags = { ...s.tags, ...c.tags }
  return true
}
