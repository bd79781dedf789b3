// The change that makes a pod fit: which object, which field, and the exact `kubectl patch`. The
// values in a patch come from the cluster, so each command is quoted for a POSIX shell.
import { shellQuote, yamlString } from '../checks/lib/facts.js'
import type { Fix } from '../checks/types.js'
import type { Owner } from './pod.js'
import { parseQuantity } from './quantity.js'
import { describe, type Origin, type Requirement } from './requirements.js'
import type { ContainerSpec, PodSpec, Toleration, WorkloadPod } from './types.js'

const WORKLOADS: Record<string, string> = {
  Deployment: 'deployment',
  StatefulSet: 'statefulset',
  Pod: 'pod',
  ReplicaSet: 'replicaset',
}

const json = (v: unknown) => shellQuote(JSON.stringify(v))

/** Tolerations Kubernetes' DefaultTolerationSeconds admission puts on pods (never on their templates). */
const ADMISSION_TOLERATIONS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']

/** Where a pod template's spec is, in the owner (a bare pod has its spec at the top). */
const specPath = (owner: Owner) => (owner.kind === 'Pod' ? '/spec' : '/spec/template/spec')

const target = (owner: Owner, ns: string | undefined) =>
  `kubectl${ns ? ` -n ${shellQuote(ns)}` : ''} patch ${WORKLOADS[owner.kind] ?? owner.kind.toLowerCase()} ${shellQuote(owner.name)}`

/** Add a toleration to the pod's workload (a Job's template is immutable: it is re-created). */
export function tolerationFix(pod: WorkloadPod, owner: Owner, toleration: Toleration, pool: string): Fix {
  const summary = `let ${owner.kind.toLowerCase()}/${owner.name} tolerate the taint of NodePool ${pool} (field ${owner.kind === 'Pod' ? 'spec' : 'spec.template.spec'}.tolerations)`
  // The API server adds the not-ready/unreachable tolerations to every pod, not to its template: a
  // template with none has no list to append to (`/-` would be refused), so those two do not count.
  const own = (pod.spec.tolerations ?? []).filter(
    (t) => owner.kind === 'Pod' || !ADMISSION_TOLERATIONS.includes(t.key ?? ''),
  )
  const op = own.length
    ? { op: 'add', path: `${specPath(owner)}/tolerations/-`, value: toleration }
    : { op: 'add', path: `${specPath(owner)}/tolerations`, value: [toleration] }
  if (!WORKLOADS[owner.kind])
    return {
      summary: `${summary}; its pod template cannot be patched in place: re-create it with`,
      snippet: { language: 'yaml', text: tolerationYaml(toleration) },
    }
  return { summary, commands: [`${target(owner, pod.metadata.namespace)} --type json -p ${json([op])}`] }
}

function tolerationYaml(t: Toleration): string {
  const lines = [`- key: ${JSON.stringify(t.key)}`, `  operator: ${yamlString(t.operator ?? 'Equal')}`]
  if (t.value !== undefined) lines.push(`  value: ${JSON.stringify(t.value)}`)
  if (t.effect) lines.push(`  effect: ${yamlString(t.effect)}`)
  return `tolerations:\n${lines.map((l) => `  ${l}`).join('\n')}\n`
}

/** Change the NodePool's requirement at `index` so it also allows what the pod asks for. */
export function requirementFix(
  pool: string,
  index: number,
  np: Requirement,
  pod: Requirement,
): Fix | undefined {
  const path = `/spec/template/spec/requirements/${index}`
  const patch = (ops: unknown[]) => `kubectl patch nodepool ${shellQuote(pool)} --type json -p ${json(ops)}`
  const wanted = pod.complement ? [] : pod.values
  if (!np.complement && np.values.length > 0 && wanted.length > 0) {
    const values = [...new Set([...np.values, ...wanted])]
    return {
      summary: `allow ${wanted.join(', ')} in NodePool ${pool}'s requirement on ${np.key} (spec.template.spec.requirements[${index}].values)`,
      commands: [patch([{ op: 'replace', path: `${path}/values`, value: values }])],
    }
  }
  if (np.complement && np.values.length > 0 && wanted.length > 0) {
    const values = np.values.filter((v) => !wanted.includes(v))
    return {
      summary: `stop excluding ${wanted.filter((v) => np.values.includes(v)).join(', ')} in NodePool ${pool}'s requirement on ${np.key} (spec.template.spec.requirements[${index}])`,
      commands: [
        patch(
          values.length
            ? [{ op: 'replace', path: `${path}/values`, value: values }]
            : [{ op: 'remove', path }],
        ),
      ],
    }
  }
  return undefined
}

/** The patch that removes the NodePool's requirements at these indices, highest first (each path still names its entry). */
export function removeRequirementsCommand(pool: string, indices: number[]): string {
  const ops = [...indices]
    .sort((a, b) => b - a)
    .map((i) => ({ op: 'remove', path: `/spec/template/spec/requirements/${i}` }))
  return `kubectl patch nodepool ${shellQuote(pool)} --type json -p ${json(ops)}`
}

/** Remove the NodePool's requirement at `index`: what it shuts out is what the pod asks for. */
export function removeRequirementFix(pool: string, index: number, np: Requirement): Fix {
  return {
    summary: `remove NodePool ${pool}'s requirement ${describe(np)} (spec.template.spec.requirements[${index}]): it shuts out what the pod asks for`,
    commands: [removeRequirementsCommand(pool, [index])],
  }
}

/** Give the NodePool's nodes a label the pod asks for. */
export function labelFix(pool: string, key: string, value: string): Fix {
  const p = { spec: { template: { metadata: { labels: { [key]: value } } } } }
  return {
    summary: `label NodePool ${pool}'s nodes ${key}=${value} (spec.template.metadata.labels), or remove the requirement from the pod`,
    commands: [`kubectl patch nodepool ${shellQuote(pool)} --type merge -p ${json(p)}`],
  }
}

/** Ask the pod for what the NodePool's nodes carry, when the pod's side is a plain nodeSelector. */
export function nodeSelectorFix(
  pod: WorkloadPod,
  owner: Owner,
  key: string,
  value: string,
  pool: string,
): Fix {
  const p =
    owner.kind === 'Pod'
      ? { spec: { nodeSelector: { [key]: value } } }
      : { spec: { template: { spec: { nodeSelector: { [key]: value } } } } }
  const summary = `NodePool ${pool} labels every node ${key}=${value}: select that value in ${owner.kind.toLowerCase()}/${owner.name}'s nodeSelector, or use another NodePool`
  if (!WORKLOADS[owner.kind] || owner.kind === 'Pod') return { summary }
  return { summary, commands: [`${target(owner, pod.metadata.namespace)} --type merge -p ${json(p)}`] }
}

export function limitFix(pool: string, resource: string, value: string): Fix {
  return {
    summary: `raise NodePool ${pool}'s ${resource} limit (spec.limits.${resource}), or free capacity it holds`,
    commands: [
      `kubectl patch nodepool ${shellQuote(pool)} --type merge -p ${json({ spec: { limits: { [resource]: value } } })}`,
    ],
  }
}

const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * Drop the pod's own requirement on `key` — its nodeSelector entry, or the expressions on the key in
 * the node-affinity term it came from. A term left empty is removed (the API server's empty term
 * matches no node, Karpenter's matches every one), and with it the last term's whole required block.
 * Undefined when the requirement is not the pod's own, or its template cannot be patched in place.
 */
export function podRequirementFix(
  pod: WorkloadPod,
  owner: Owner,
  key: string,
  origin: Origin,
  because = 'no instance type here meets it',
): Fix | undefined {
  if (!WORKLOADS[owner.kind] || owner.kind === 'Pod') return undefined
  const spec = specPath(owner)
  const workload = `${owner.kind.toLowerCase()}/${owner.name}`
  const command = (ops: unknown[]) => `${target(owner, pod.metadata.namespace)} --type json -p ${json(ops)}`
  if (origin.kind === 'nodeSelector') {
    if (pod.spec.nodeSelector?.[key] === undefined) return undefined
    return {
      summary: `drop ${workload}'s nodeSelector ${key}=${pod.spec.nodeSelector[key]} (field ${spec.slice(1).replace(/\//g, '.')}.nodeSelector): ${because}`,
      commands: [command([{ op: 'remove', path: `${spec}/nodeSelector/${pointer(key)}` }])],
    }
  }
  if (origin.kind !== 'affinity') return undefined
  const required = `${spec}/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution`
  const terms =
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms
  const term = terms?.[origin.term]
  const on = (term?.matchExpressions ?? []).flatMap((e, i) => (e.key === key ? [i] : []))
  if (!terms || !term || !on.length) return undefined
  const emptied = on.length === (term.matchExpressions ?? []).length && !term.matchFields?.length
  const ops = !emptied
    ? on.reverse().map((i) => ({
        op: 'remove',
        path: `${required}/nodeSelectorTerms/${origin.term}/matchExpressions/${i}`,
      }))
    : terms.length > 1
      ? [{ op: 'remove', path: `${required}/nodeSelectorTerms/${origin.term}` }]
      : [{ op: 'remove', path: required }]
  return {
    summary: `drop ${workload}'s own requirement on ${key} (node-affinity term ${origin.term}${emptied ? ', which then asks for nothing and goes with it' : ''}): ${because}`,
    commands: [command(ops)],
  }
}

/**
 * Drop the pod's requests (and limits: an extended resource's must equal them) for these resources,
 * in every container that asks. Undefined for a bare pod, whose requests cannot change in place.
 */
export function dropRequestsFix(
  pod: WorkloadPod,
  owner: Owner,
  resources: string[],
  summary: string,
): Fix | undefined {
  if (!WORKLOADS[owner.kind] || owner.kind === 'Pod') return undefined
  const ops: unknown[] = []
  for (const list of ['initContainers', 'containers'] as const)
    (pod.spec[list] ?? []).forEach((c, i) => {
      for (const part of ['requests', 'limits'] as const)
        for (const r of resources)
          if (c.resources?.[part]?.[r] !== undefined)
            ops.push({
              op: 'remove',
              path: `${specPath(owner)}/${list}/${i}/resources/${part}/${pointer(r)}`,
            })
    })
  if (!ops.length) return undefined
  return { summary, commands: [`${target(owner, pod.metadata.namespace)} --type json -p ${json(ops)}`] }
}

/** A quantity of at most n: cpu in whole millicores, memory-like in whole Mi, others whole. */
function below(resource: string, n: number): string {
  if (resource === 'cpu') return `${Math.floor(n * 1000)}m`
  if (/memory|storage/.test(resource)) return `${Math.floor(n / 2 ** 20)}Mi`
  return String(Math.floor(n))
}

/**
 * Lower the pod's requests (and limits: an extended resource's must equal them) for these resources to
 * at most `to` each, as Kubernetes sums them: sidecars (init containers that keep running) and then
 * containers keep what they ask while the sum stays within it, the rest ask less or nothing; an init
 * container that runs to completion runs beside the sidecars started before it. Undefined for a bare
 * pod, whose requests cannot change in place.
 */
export function lowerRequestsFix(
  pod: WorkloadPod,
  owner: Owner,
  to: Record<string, number>,
  summary: string,
): Fix | undefined {
  if (!WORKLOADS[owner.kind] || owner.kind === 'Pod') return undefined
  const ops: unknown[] = []
  const inits = (pod.spec.initContainers ?? []).map((c, i) => ({ c, at: `initContainers/${i}` }))
  const order = [
    ...inits.filter(({ c }) => c.restartPolicy === 'Always'),
    ...(pod.spec.containers ?? []).map((c, i) => ({ c, at: `containers/${i}` })),
  ]
  for (const [r, most] of Object.entries(to)) {
    const lower = (c: ContainerSpec, at: string, keep: number) => {
      for (const part of ['requests', 'limits'] as const)
        if (c.resources?.[part]?.[r] !== undefined) {
          const path = `${specPath(owner)}/${at}/resources/${part}/${pointer(r)}`
          ops.push(keep > 0 ? { op: 'replace', path, value: below(r, keep) } : { op: 'remove', path })
        }
    }
    const asks = (c: ContainerSpec) =>
      parseQuantity(c.resources?.requests?.[r] ?? c.resources?.limits?.[r]) ?? 0
    let left = most
    for (const { c, at } of order) {
      const keep = Math.min(asks(c), left)
      left -= keep
      if (keep < asks(c)) lower(c, at, keep)
    }
    let sidecars = 0
    for (const { c, at } of inits) {
      const keep = Math.min(asks(c), c.restartPolicy === 'Always' ? Infinity : Math.max(0, most - sidecars))
      if (c.restartPolicy === 'Always') sidecars += Math.min(asks(c), Math.max(0, most - sidecars))
      else if (keep < asks(c)) lower(c, at, keep)
    }
  }
  if (!ops.length) return undefined
  return { summary, commands: [`${target(owner, pod.metadata.namespace)} --type json -p ${json(ops)}`] }
}

/**
 * Drop the pod's required pod (anti-)affinity term. Not "make it preferred": Karpenter relaxes a pod's
 * required node-affinity terms before its preferred pod affinity (scheduling/preferences.go Relax), so
 * a preferred term still fails a pod whose last node-affinity term does not fit (oracle seeds 222, 522,
 * 790). Undefined for a bare pod, whose affinity cannot change in place.
 */
export function dropAffinityTermFix(
  pod: WorkloadPod,
  owner: Owner,
  term: { kind: 'podAffinity' | 'podAntiAffinity'; index: number },
  summary: string,
): Fix | undefined {
  if (!WORKLOADS[owner.kind] || owner.kind === 'Pod') return undefined
  const field = `affinity/${term.kind}/requiredDuringSchedulingIgnoredDuringExecution/${term.index}`
  if (!pod.spec.affinity?.[term.kind]?.requiredDuringSchedulingIgnoredDuringExecution?.[term.index])
    return undefined
  return {
    summary: `${summary}; here the term is dropped (${field.replace(/\//g, '.').replace(/\.(\d+)$/, '[$1]')})`,
    commands: [
      `${target(owner, pod.metadata.namespace)} --type json -p ${json([{ op: 'remove', path: `${specPath(owner)}/${field}` }])}`,
    ],
  }
}

/**
 * Drop the container port's hostPort (the port stays for Services and probes): what the NodePool's
 * DaemonSet binds on every node is then free for it. Undefined for a bare pod (immutable ports).
 */
export function dropHostPortFix(
  spec: PodSpec,
  owner: Owner,
  namespace: string | undefined,
  port: { at?: [number, number] },
  summary: string,
): Fix | undefined {
  if (!WORKLOADS[owner.kind] || owner.kind === 'Pod' || !port.at) return undefined
  const [c, p] = port.at
  if (spec.containers?.[c]?.ports?.[p]?.hostPort === undefined) return undefined
  const op = { op: 'remove', path: `${specPath(owner)}/containers/${c}/ports/${p}/hostPort` }
  return { summary, commands: [`${target(owner, namespace)} --type json -p ${json([op])}`] }
}
