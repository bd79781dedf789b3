import type { ClusterAutoscalerDeployment, Facts, Nodegroup } from '../facts/types.js'
import { SCALED_FROM } from '../desired/ownership.js'
import { describeFailure, need } from './lib/facts.js'
import type { Check, Finding } from './types.js'

const NODEGROUP_LABEL = 'eks.amazonaws.com/nodegroup'
const TAG_PREFIX = 'k8s.io/cluster-autoscaler/'

export const clusterAutoscaler: Check = {
  meta: {
    id: 'cluster-autoscaler',
    title: 'No cluster-autoscaler scales node groups while Karpenter provisions',
    category: 'cluster',
    severity: 'warning',
    docs: `A cluster-autoscaler Deployment (any namespace) with replicas > 0 conflicts with Karpenter when Karpenter has a NodePool and cluster-autoscaler scales at least one node group: one named by --nodes=<min>:<max>:<ASG>, or every managed node group when --node-group-auto-discovery=asg:tag=… asks only for the tags EKS puts on their Auto Scaling groups (${TAG_PREFIX}enabled, ${TAG_PREFIX}<cluster>). Both then answer the same pending pods (duplicate capacity), and cluster-autoscaler scales those groups down under pods Karpenter counted on — the Karpenter controller's own nodes included. Scaled to 0, only another cluster's tags, or no node group at all: no conflict.`,
  },
  run(facts) {
    const read = facts.kube.clusterAutoscalers
    if (!read)
      return [
        {
          status: 'unknown',
          message:
            'cluster-autoscaler Deployments were not collected (a snapshot saved before karpctl looked for them): run doctor against the cluster',
        },
      ]
    const autoscalers = need(read)
    if (autoscalers.length === 0)
      return [{ status: 'pass', message: 'no cluster-autoscaler Deployment runs in the cluster' }]
    const pools = need(facts.kube.nodePools).map((p) => p.metadata.name)
    return autoscalers.map((a) => judge(facts, a, pools))
  },
}

/** The values of a flag, written `--flag=value` or `--flag value`. */
export function flagValues(args: string[], flag: string): string[] {
  const out: string[] = []
  args.forEach((arg, i) => {
    if (arg.startsWith(`${flag}=`)) out.push(arg.slice(flag.length + 1))
    else if (arg === flag && args[i + 1] !== undefined) out.push(args[i + 1] as string)
  })
  return out
}

/**
 * What --node-group-auto-discovery=asg:tag=… finds among this cluster's managed node groups: all of
 * them when it asks only for the tags EKS puts on their Auto Scaling groups, none when it names
 * another cluster, `unknown` for other tags (self-managed groups' tags are not read).
 */
export function discoveryScope(spec: string, cluster: string): 'managed' | 'other-cluster' | 'unknown' {
  if (!spec.startsWith('asg:tag=')) return 'unknown'
  const eks: Record<string, string> = {
    [`${TAG_PREFIX}enabled`]: 'true',
    [`${TAG_PREFIX}${cluster}`]: 'owned',
  }
  const tags = spec
    .slice('asg:tag='.length)
    .split(',')
    .map((t) => {
      const eq = t.indexOf('=')
      return eq < 0 ? { key: t, value: undefined } : { key: t.slice(0, eq), value: t.slice(eq + 1) }
    })
  if (tags.some((t) => t.key.startsWith(TAG_PREFIX) && !(t.key in eks))) return 'other-cluster'
  return tags.every((t) => t.key in eks && (t.value === undefined || t.value === eks[t.key]))
    ? 'managed'
    : 'unknown'
}

interface Scaled {
  asg: string
  nodegroup?: string
}

function judge(facts: Facts, a: ClusterAutoscalerDeployment, pools: string[]): Finding {
  const subject = `${a.namespace}/${a.name}`
  if (a.replicas === 0)
    return { status: 'pass', subject, message: `cluster-autoscaler ${subject} is scaled to 0 replicas` }
  if (pools.length === 0)
    return {
      status: 'pass',
      subject,
      message: `cluster-autoscaler ${subject} runs, but Karpenter has no NodePool: it provisions nothing, so the two do not compete`,
    }
  const cluster = facts.meta.clusterName
  const read = facts.eks.nodegroups
  const groups: Nodegroup[] = read?.ok ? read.value : []
  const groupOf = (asg: string) => groups.find((g) => g.autoScalingGroups.includes(asg))?.name
  const scaled: Scaled[] = []
  const add = (s: Scaled) => {
    if (!scaled.some((x) => x.asg === s.asg)) scaled.push(s)
  }
  const unknown: string[] = []
  const otherCluster: string[] = []
  for (const v of flagValues(a.args, '--nodes')) {
    const asg = v.split(':').slice(2).join(':')
    if (asg) add({ asg, ...(groupOf(asg) ? { nodegroup: groupOf(asg) } : {}) })
  }
  for (const spec of flagValues(a.args, '--node-group-auto-discovery')) {
    const scope = discoveryScope(spec, cluster)
    if (scope === 'other-cluster') otherCluster.push(spec)
    else if (scope === 'unknown')
      unknown.push(
        `--node-group-auto-discovery=${spec} selects Auto Scaling groups by tags karpctl does not read`,
      )
    else if (!read)
      unknown.push(`the managed node groups were not read, so what ${spec} discovers is not known`)
    else if (!read.ok) unknown.push(`what ${spec} discovers is not known: ${describeFailure(read.error)}`)
    else for (const g of groups) for (const asg of g.autoScalingGroups) add({ asg, nodegroup: g.name })
  }
  const evidence = { replicas: a.replicas, args: a.args, nodePools: pools }
  if (scaled.length === 0 && unknown.length > 0)
    return {
      status: 'unknown',
      subject,
      message: `cluster-autoscaler ${subject} runs (${a.replicas} replicas) beside Karpenter; whether it scales this cluster's node groups is not known: ${unknown.join('; ')}`,
      evidence,
    }
  if (scaled.length === 0)
    return {
      status: 'pass',
      subject,
      message:
        otherCluster.length > 0
          ? `cluster-autoscaler ${subject} discovers only another cluster's node groups (${otherCluster.join(', ')}): it scales nothing of ${cluster}`
          : `cluster-autoscaler ${subject} scales no node group (neither --nodes nor --node-group-auto-discovery)`,
      evidence,
    }
  const controllerGroups = controllerNodegroups(facts)
  const underController = [
    ...new Set(
      scaled.flatMap((s) => (s.nodegroup && controllerGroups.includes(s.nodegroup) ? [s.nodegroup] : [])),
    ),
  ]
  const names = scaled.map((s) => (s.nodegroup ? `${s.asg} (node group ${s.nodegroup})` : s.asg))
  return {
    status: 'warn',
    subject,
    message: `cluster-autoscaler ${subject} (${a.replicas} replicas) scales ${names.join(', ')} while Karpenter provisions for NodePool ${pools.join(', ')}: both answer the same pending pods with new nodes, and cluster-autoscaler scales its groups down under pods Karpenter placed${underController.length > 0 ? ` — node group ${underController.join(', ')} runs the Karpenter controller` : ''}`,
    evidence: {
      ...evidence,
      scaled,
      ...(underController.length > 0 ? { controllerNodegroups: underController } : {}),
    },
    ...(unknown.length > 0 ? { caveats: unknown } : {}),
    fix: {
      summary: `scale ${subject} to 0 (the annotation records its replicas, so karpctl teardown gives them back); keep the node groups at a fixed size for the Karpenter controller`,
      commands: [
        `kubectl -n ${a.namespace} annotate deployment ${a.name} ${SCALED_FROM}=${a.replicas} --overwrite`,
        `kubectl -n ${a.namespace} scale deployment ${a.name} --replicas=0`,
      ],
    },
  }
}

/** The managed node groups the Karpenter controller's pods run on (by their nodes' EKS label). */
function controllerNodegroups(facts: Facts): string[] {
  const pods = facts.kube.pods
  const nodes = facts.kube.nodes
  if (!pods.ok || !nodes.ok) return []
  return [
    ...new Set(
      pods.value.flatMap((p) => {
        const group = nodes.value.find((n) => n.name === p.nodeName)?.labels[NODEGROUP_LABEL]
        return group ? [group] : []
      }),
    ),
  ]
}
