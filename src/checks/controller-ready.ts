import type { Deployment, Facts, HelmRelease, KubeNode, Taint, Toleration } from '../facts/types.js'
import { need, partitionOf, skip, valueAt } from './lib/facts.js'
import { helmUpgradeCommand } from './lib/install.js'
import { createNodeRoleCommands, WITHOUT_EKSCTL } from './lib/node-access.js'
import { optional, part } from './lib/parts.js'
import type { Check, Finding, Fix } from './types.js'
import { parseQuantity } from '../desired/quantity.js'

/** Restarts beyond this mean the controller keeps dying even if it is up right now. */
const MAX_RESTARTS = 5
const CHART_TOLERATIONS: Toleration[] = [{ key: 'CriticalAddonsOnly', operator: 'Exists' }]
const BAD_WAITING = [
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'CreateContainerConfigError',
  'CreateContainerError',
]

export const controllerReady: Check = {
  meta: {
    id: 'controller-ready',
    title: 'Karpenter controller is available and has nodes it does not manage',
    category: 'cluster',
    severity: 'error',
    docs: "The controller Deployment is available, no controller container crash-loops, and there are enough ready non-Karpenter nodes for its replicas: the chart's hostname anti-affinity puts one replica per node, and its node affinity keeps them off nodes Karpenter manages.",
  },
  run(facts) {
    const deployment = need(facts.kube.deployment)
    if (!deployment) {
      const release = need(facts.kube.release)
      if (!release)
        skip(
          'Karpenter is not installed (no Helm release and no controller Deployment): see karpenter-version',
        )
      return [missingDeployment(release)]
    }
    const release = optional(facts.kube.release) ?? null
    return [
      ...part(() => availability(deployment)),
      ...part(() => crashLoops(facts, deployment)),
      ...part(() => schedulingRoom(facts, deployment, release)),
    ]
  },
}

const ref = (d: Deployment) => `${d.metadata.namespace ?? 'kube-system'}/${d.metadata.name}`

function debugFix(d: Deployment, summary: string): Fix {
  const ns = d.metadata.namespace ?? 'kube-system'
  return {
    summary,
    commands: [
      `kubectl -n ${ns} logs deploy/${d.metadata.name} -c controller`,
      `kubectl -n ${ns} describe deploy ${d.metadata.name}`,
      `kubectl -n ${ns} get pods -l app.kubernetes.io/name=karpenter -o wide`,
    ],
  }
}

function missingDeployment(release: HelmRelease): Finding {
  return {
    status: 'fail',
    subject: `${release.namespace}/${release.name}`,
    message: `Helm release ${release.namespace}/${release.name} exists but its controller Deployment was not found`,
    evidence: { release: release.name, status: release.status, chartVersion: release.chartVersion },
    fix: {
      summary: 'see what the release rendered and re-apply it',
      commands: [
        `helm get manifest ${release.name} --namespace ${release.namespace} | grep -A3 'kind: Deployment'`,
        helmUpgradeCommand(release, release.chartVersion, ' --wait'),
      ],
    },
  }
}

function availability(d: Deployment): Finding[] {
  const available = d.conditions.find((c) => c.type === 'Available')
  const evidence = {
    replicas: d.replicas,
    availableReplicas: d.availableReplicas,
    readyReplicas: d.readyReplicas,
    available: available ?? null,
  }
  if (d.replicas === 0) {
    return [
      {
        status: 'fail',
        subject: ref(d),
        message: `controller Deployment ${ref(d)} is scaled to 0 replicas: nothing provisions or removes nodes`,
        evidence,
        fix: {
          summary: 'scale it back (the chart default is 2)',
          commands: [
            `kubectl -n ${d.metadata.namespace ?? 'kube-system'} scale deploy ${d.metadata.name} --replicas=2`,
          ],
        },
      },
    ]
  }
  if (d.availableReplicas >= d.replicas && available?.status === 'True') {
    return [
      {
        status: 'pass',
        subject: ref(d),
        message: `controller ${ref(d)} is available (${d.availableReplicas}/${d.replicas})`,
        evidence,
      },
    ]
  }
  const why =
    available && available.status !== 'True'
      ? `: ${available.reason ?? ''}${available.message ? ` — ${available.message}` : ''}`
      : ''
  // One live replica still provisions (leader election); none means no autoscaling at all.
  const status = d.availableReplicas > 0 ? 'warn' : 'fail'
  return [
    {
      status,
      subject: ref(d),
      message: `controller Deployment ${ref(d)} has ${d.availableReplicas}/${d.replicas} replicas available${why}`,
      evidence,
      fix: debugFix(d, 'read why the replicas are not available (pod events, then the controller log)'),
    },
  ]
}

function crashLoops(facts: Facts, d: Deployment): Finding[] {
  const ns = d.metadata.namespace ?? 'kube-system'
  const findings: Finding[] = []
  for (const pod of need(facts.kube.pods)) {
    for (const c of pod.containerStatuses) {
      const waiting = c.waitingReason && BAD_WAITING.includes(c.waitingReason)
      if (!waiting && c.restartCount <= MAX_RESTARTS) continue
      const podRef = `${pod.metadata.namespace ?? ns}/${pod.metadata.name}`
      const last = c.lastTerminated
      const oom = last?.reason === 'OOMKilled'
      // The previous run's end is the cause a person would look up first: say it, and the limit it hit.
      const cause = last
        ? `: its last run ended ${last.reason ?? 'with no reason given'}${last.exitCode !== undefined ? ` (exit code ${last.exitCode})` : ''}${oom ? `, at its memory limit ${c.memoryLimit ?? '(none set: the node ran out)'}` : ''}`
        : ''
      findings.push({
        status: 'fail',
        subject: podRef,
        message: `controller pod ${podRef} container ${c.name} ${waiting ? `is in ${c.waitingReason}` : 'keeps restarting'} (${c.restartCount} restarts)${cause}`,
        code: oom ? 'out-of-memory' : 'crash-loop',
        evidence: {
          pod: podRef,
          container: c.name,
          waitingReason: c.waitingReason,
          restartCount: c.restartCount,
          node: pod.nodeName,
          ...(last ? { lastTerminated: last } : {}),
          ...(c.memoryLimit ? { memoryLimit: c.memoryLimit } : {}),
        },
        fix: oom
          ? oomFix(facts, d, c.memoryLimit)
          : {
              summary: /Image/.test(c.waitingReason ?? '')
                ? 'the image cannot be pulled: check the image reference and the node’s access to public.ecr.aws'
                : 'read the log of the crashed container (commonly: wrong settings.clusterName, IAM credentials, or an unreachable interruption queue)',
              commands: [
                `kubectl -n ${pod.metadata.namespace ?? ns} logs ${pod.metadata.name} -c ${c.name} --previous`,
                `kubectl -n ${pod.metadata.namespace ?? ns} describe pod ${pod.metadata.name}`,
              ],
            },
      })
    }
  }
  if (findings.length > 0) return findings
  return [
    {
      status: 'pass',
      subject: ref(d),
      message: `no controller container of ${ref(d)} crash-loops or restarts repeatedly`,
    },
  ]
}

function tolerates(tolerations: Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false
    if (t.operator === 'Exists') return !t.key || t.key === taint.key
    return t.key === taint.key && String(t.value ?? '') === (taint.value ?? '')
  })
}

interface Placement {
  tolerations: Toleration[]
  selector: Record<string, string>
  /** A required hostname anti-affinity: one replica per node. */
  onePerNode: boolean
}

/**
 * Where a replica may run: the live pod template (what Helm, Argo CD or kustomize rendered); in a
 * snapshot saved before karpctl read it, the release's values, else the chart's defaults.
 */
function placementOf(d: Deployment, release: HelmRelease | null): Placement {
  if (d.placement)
    return {
      tolerations: d.placement.tolerations,
      selector: d.placement.nodeSelector,
      onePerNode: d.placement.requiredAntiAffinityTopologyKeys.includes('kubernetes.io/hostname'),
    }
  return {
    tolerations: release
      ? ((valueAt(release.computedValues, 'tolerations') as Toleration[] | undefined) ?? [])
      : CHART_TOLERATIONS,
    selector: (valueAt(release?.computedValues, 'nodeSelector') as Record<string, string> | undefined) ?? {},
    onePerNode: onePerNode(release),
  }
}

/** Nodes a controller replica may run on: not managed by Karpenter, ready, selected, tolerated. */
function eligibleNodes(nodes: KubeNode[], p: Placement): KubeNode[] {
  return nodes.filter(
    (n) =>
      !n.karpenter &&
      n.ready &&
      Object.entries(p.selector).every(([k, v]) => n.labels[k] === String(v)) &&
      n.taints
        .filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')
        .every((t) => tolerates(p.tolerations, t)),
  )
}

/** The chart's default affinity has required hostname anti-affinity; a user-supplied affinity may drop it. */
function onePerNode(release: HelmRelease | null): boolean {
  const affinity = valueAt(release?.computedValues, 'affinity')
  if (affinity === undefined) return true
  const terms = valueAt(
    affinity as Record<string, unknown>,
    'podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution',
  )
  return (
    Array.isArray(terms) &&
    terms.some((t) => (t as { topologyKey?: string }).topologyKey === 'kubernetes.io/hostname')
  )
}

function schedulingRoom(facts: Facts, d: Deployment, release: HelmRelease | null): Finding[] {
  const nodes = need(facts.kube.nodes)
  const ns = d.metadata.namespace ?? 'kube-system'
  const fargate = nodes.filter((n) => n.labels['eks.amazonaws.com/compute-type'] === 'fargate')
  const pods = optional(facts.kube.pods) ?? []
  if (pods.length > 0 && pods.every((p) => fargate.some((n) => n.name === p.nodeName))) {
    skip(
      `the controller runs on EKS Fargate (${pods.map((p) => p.nodeName).join(', ')}): Fargate brings one node per pod`,
    )
  }
  const placement = placementOf(d, release)
  const eligible = eligibleNodes(nodes, placement)
  const spread = placement.onePerNode
  const needed = spread ? d.replicas : Math.min(d.replicas, 1)
  const pending = pods.filter((p) => !p.nodeName).map((p) => p.metadata.name)
  const evidence = {
    replicas: d.replicas,
    eligibleNodes: eligible.map((n) => n.name),
    karpenterNodes: nodes.filter((n) => n.karpenter).map((n) => n.name),
    notReady: nodes.filter((n) => !n.karpenter && !n.ready).map((n) => n.name),
    pendingPods: pending,
  }
  if (eligible.length >= needed) {
    return [
      {
        status: 'pass',
        subject: ref(d),
        message: `${eligible.length} ready node${eligible.length === 1 ? '' : 's'} outside Karpenter's management for ${d.replicas} controller replica${d.replicas === 1 ? '' : 's'}`,
        evidence,
      },
    ]
  }
  return [
    {
      status: eligible.length === 0 ? 'fail' : 'warn',
      subject: ref(d),
      message: `${eligible.length} ready node${eligible.length === 1 ? '' : 's'} not managed by Karpenter for ${d.replicas} controller replica${d.replicas === 1 ? '' : 's'}${spread ? ' (one per node by anti-affinity)' : ''}: the controller must not run on nodes it manages, so ${needed - eligible.length} replica${needed - eligible.length === 1 ? '' : 's'} cannot be scheduled`,
      evidence,
      fix: roomFix(facts, nodes, d, release, ns),
    },
  ]
}

function roomFix(
  facts: Facts,
  nodes: KubeNode[],
  d: Deployment,
  release: HelmRelease | null,
  ns: string,
): Fix {
  const groups = [
    ...new Set(nodes.map((n) => n.labels['eks.amazonaws.com/nodegroup']).filter((g): g is string => !!g)),
  ]
  const one = release
    ? helmUpgradeCommand(release, release.chartVersion, ' --set replicas=1')
    : `kubectl -n ${ns} scale deploy ${d.metadata.name} --replicas=1`
  const summary =
    'give the controller its own nodes (a managed node group or Fargate profile) with at least one node per replica, or, accepting no failover, run one replica'
  if (groups.length > 0)
    return {
      summary,
      commands: [
        ...groups.map((g) => {
          // EKS refuses a desired size above the group's max: raise it with the rest when it is lower.
          const max = nodegroupsRead(facts)?.find((n) => n.name === g)?.maxSize
          const raise = max !== undefined && max < d.replicas ? `,maxSize=${d.replicas}` : ''
          return `aws eks update-nodegroup-config --cluster-name ${facts.meta.clusterName} --nodegroup-name ${g} --scaling-config minSize=${d.replicas}${raise},desiredSize=${d.replicas} --region ${facts.meta.region}`
        }),
        one,
      ],
    }
  return {
    summary: `${summary}; the node group with eksctl, or without it (below)`,
    commands: [
      `eksctl create nodegroup --cluster ${facts.meta.clusterName} --region ${facts.meta.region} --name ${SYSTEM_NODEGROUP} --nodes ${d.replicas} --nodes-min ${d.replicas} --nodes-max ${d.replicas + 1}`,
      one,
    ],
    alternative: { label: WITHOUT_EKSCTL, commands: [...createNodegroupCommands(facts, d.replicas), one] },
  }
}

const nodegroupsRead = (facts: Facts) => (facts.eks.nodegroups?.ok ? facts.eks.nodegroups.value : undefined)

const SYSTEM_NODEGROUP = 'karpenter-system'

/**
 * What `eksctl create nodegroup` does, with aws alone: a node role of its own (a role Karpenter's nodes
 * also use would lose its aws-auth mapping when EKS deletes the group), the managed node group in the
 * cluster's subnets, and the wait for its nodes. What the facts do not hold is asked of AWS in place.
 */
function createNodegroupCommands(facts: Facts, replicas: number): string[] {
  const { clusterName, region, accountId } = facts.meta
  const role = `KarpenterSystemNodeRole-${clusterName}`.slice(0, 64)
  const roleArn = accountId
    ? `arn:${partitionOf(facts)}:iam::${accountId}:role/${role}`
    : `$(aws iam get-role --role-name ${role} --query Role.Arn --output text)`
  const known = optional(facts.eks.cluster)?.subnetIds ?? []
  const subnets =
    known.length > 0
      ? known.join(' ')
      : `$(aws eks describe-cluster --name ${clusterName} --region ${region} --query cluster.resourcesVpcConfig.subnetIds --output text)`
  const group = `--cluster-name ${clusterName} --nodegroup-name ${SYSTEM_NODEGROUP} --region ${region}`
  return [
    ...createNodeRoleCommands(facts, role, {}),
    `aws eks create-nodegroup ${group} --node-role ${roleArn} --subnets ${subnets} --scaling-config minSize=${replicas},maxSize=${replicas + 1},desiredSize=${replicas}`,
    `aws eks wait nodegroup-active ${group}`,
  ]
}

/** Twice a memory quantity in its own unit (`512Mi` → `1Gi` stays readable as `1024Mi`); 1Gi when unknown. */
export function doubledMemory(limit: string | undefined): string {
  const m = /^(\d+(?:\.\d+)?)([KMGTPE]i?|[kmgtpe]|)$/.exec(limit ?? '')
  // Twice a quantity past Kubernetes' bound is no quantity either.
  if (!m || parseQuantity(`${Number(m[1]) * 2}${m[2]}`) === undefined) return '1Gi'
  const n = Number(m[1]) * 2
  return `${Number.isInteger(n) ? n : n.toFixed(1)}${m[2]}`
}

/** An OOMKilled controller: more memory through the chart's controller.resources (requests = limits, as the chart's docs advise). */
function oomFix(facts: Facts, d: Deployment, limit: string | undefined): Fix {
  const release = facts.kube.release.ok ? facts.kube.release.value : null
  const more = doubledMemory(limit)
  const set = ` --set controller.resources.requests.memory=${more} --set controller.resources.limits.memory=${more}`
  return {
    summary: `the controller ran out of memory${limit ? ` at ${limit}` : ''}: raise controller.resources to ${more}`,
    commands: release
      ? [helmUpgradeCommand(release, release.chartVersion, set)]
      : [
          `kubectl -n ${d.metadata.namespace ?? 'kube-system'} set resources deployment ${d.metadata.name} -c controller --requests=memory=${more} --limits=memory=${more}`,
        ],
  }
}
