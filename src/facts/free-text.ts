// Free text in a snapshot: the fields whose content is whatever a person or a program wrote (userData,
// annotations, env values, tags, condition and event messages, log lines, Helm values). A redactor that
// lists shapes can never know every secret such text holds, so a saved snapshot keeps free text only
// where a check or `why` judges it (then through the redactor, as all of a snapshot), and nothing else.
// This list is that decision, field by field; schema/facts.schema.json carries it
// (`x-karpctl-free-text`), and a unit test walks a saved snapshot against it.
//
// Paths: dot-separated keys from the snapshot's root, `*` for one array index or map key, `**.` for
// any depth.

export interface FreeTextField {
  path: string
  /** What reads it; undefined: nothing does, and a snapshot does not keep it. */
  judgedBy?: string
  /** For a map of free text: only the keys a judgement reads are kept. */
  keys?: (key: string) => boolean
}

/**
 * Annotations a check or `why` reads: Karpenter's own (hashes, do-not-disrupt), karpctl's marks, Helm's
 * ownership, the IRSA and STS ones on the controller's ServiceAccount, the CRDs' version, the default
 * StorageClass. Any other annotation may hold anything (a last-applied-configuration, a token).
 */
const JUDGED_ANNOTATION_PREFIXES = ['karpenter.sh/', 'karpenter.k8s.aws/', 'karpctl.io/', 'meta.helm.sh/']
const JUDGED_ANNOTATIONS = new Set([
  'helm.sh/resource-policy',
  'eks.amazonaws.com/role-arn',
  'eks.amazonaws.com/sts-regional-endpoints',
  'app.kubernetes.io/version',
  'storageclass.kubernetes.io/is-default-class',
])
export const judgedAnnotation = (key: string): boolean =>
  JUDGED_ANNOTATIONS.has(key) || JUDGED_ANNOTATION_PREFIXES.some((p) => key.startsWith(p))

/**
 * The controller's environment variables a judgement reads: the interruption queue (doctor's
 * interruption checks, when the chart's value is not set), the feature gates and the VM memory
 * overhead (`why`'s catalogue). Every other value (a token, a proxy URL with a password) is not kept.
 */
const JUDGED_ENV = new Set(['INTERRUPTION_QUEUE', 'FEATURE_GATES', 'VM_MEMORY_OVERHEAD_PERCENT'])
export const judgedEnv = (name: string): boolean => JUDGED_ENV.has(name)

/** Every free-text field of doctor's, why's and why-node's snapshots, and what judges it. */
export const FREE_TEXT: FreeTextField[] = [
  {
    path: '**.metadata.annotations',
    judgedBy: 'the annotations named in judgedAnnotation',
    keys: judgedAnnotation,
  },
  {
    path: 'kube.crds.value.*.annotations',
    judgedBy: "install-state (the CRDs' version and owner)",
    keys: judgedAnnotation,
  },
  {
    path: 'kube.release.value.renderedServiceAccount.annotations',
    judgedBy: 'pod-identity, sts-regional-annotation',
    keys: judgedAnnotation,
  },
  {
    path: 'kube.clusterAutoscalers.value.*.annotations',
    judgedBy: "cluster-autoscaler (karpctl's mark)",
    keys: judgedAnnotation,
  },
  // A CRD's labels say its version and chart (install-state); the rest is whatever a tool added.
  {
    path: 'kube.crds.value.*.labels',
    judgedBy: 'install-state (app.kubernetes.io/version, helm.sh/chart)',
    keys: (k) => k.startsWith('app.kubernetes.io/') || k === 'helm.sh/chart',
  },
  // Labels of nodes, pods, NodePools and NodeClaims: any key may be what a pod's nodeSelector,
  // affinity or spread names, or a NodePool's template sets (why, drift, controller-ready, tenants).
  {
    path: '**.labels',
    judgedBy:
      "why (selectors, affinity, spreads, drift), controller-ready (the controller's nodeSelector), tenant-isolation, cluster-autoscaler",
  },
  {
    path: 'kube.deployment.value.env',
    judgedBy: 'interruption-queue, why (FEATURE_GATES, VM_MEMORY_OVERHEAD_PERCENT)',
    keys: judgedEnv,
  },
  // Karpenter writes these to every instance; no check reads them.
  { path: 'kube.nodeClasses.value.*.spec.userData' },
  { path: 'kube.nodeClasses.value.*.spec.tags' },
  {
    path: 'kube.release.value.values',
    judgedBy:
      'toleration-value-types (lints the whole tree), sts-regional-annotation, helm-release and the settings every check reads',
  },
  { path: 'kube.release.value.computedValues', judgedBy: 'as kube.release.value.values' },
  // An install with no release: the settings read back from the controller's env, the judged annotations.
  { path: 'kube.rendered.value.computedValues', judgedBy: 'as kube.release.value.values' },
  { path: '**.status.conditions.*.message', judgedBy: 'nodeclass-ready, why (NodeClaims, NodePools, pods)' },
  { path: 'events.value.*.message', judgedBy: 'why (the Events it prints for a pod)' },
  { path: 'controllerLog.**', judgedBy: "why (the controller's log lines it prints)" },
  {
    path: '**.tags',
    judgedBy: 'discovery-tags (selector terms match them), ownership (CloudFormation and karpctl marks)',
  },
]

const matches = (pattern: string[], path: string[]): boolean => {
  if (pattern.length === 0) return path.length === 0
  const [head, ...rest] = pattern
  if (head === '**') return path.some((_, i) => matches(rest, path.slice(i))) || rest.length === 0
  if (path.length === 0) return false
  return (head === '*' || head === path[0]) && matches(rest, path.slice(1))
}

/** The free-text field `path` (keys from the root) is, if any: the first entry of FREE_TEXT that matches. */
export function freeTextAt(path: string[]): FreeTextField | undefined {
  return FREE_TEXT.find((f) => matches(f.path.split('.'), path))
}

/**
 * The snapshot as saved: every free-text field nothing judges is left out, and every map of free text
 * keeps only the keys a judgement reads. Structure and everything else are kept as they are (the
 * redactor runs after this, on all of it). A new object; `facts` is not changed.
 */
export function keepJudged<T>(facts: T): T {
  const walk = (value: unknown, path: string[]): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, String(i)]))
    if (!value || typeof value !== 'object') return value
    const out: Record<string, unknown> = {}
    for (const [key, child] of Object.entries(value)) {
      const at = [...path, key]
      const field = freeTextAt(at)
      if (field && !field.judgedBy) continue
      if (field?.keys && child && typeof child === 'object' && !Array.isArray(child)) {
        out[key] = Object.fromEntries(Object.entries(child).filter(([k]) => field.keys?.(k)))
        continue
      }
      // Judged free text is kept whole (a Helm values tree, a log): the redactor sees it next.
      out[key] = field ? child : walk(child, at)
    }
    return out
  }
  return walk(facts, []) as T
}
