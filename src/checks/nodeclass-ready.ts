import type { Condition, EC2NodeClass, Facts, NodePool } from '../facts/types.js'
import { isLegacy, need, releaseVersion, shellQuote, skip, yamlString } from './lib/facts.js'
import { controllerDeploymentName, controllerNamespace } from './lib/install.js'
import type { Check, Finding, Fix } from './types.js'
import { parseQuantity } from '../desired/quantity.js'

const NODECLASS_GROUP = 'karpenter.k8s.aws'
const NODECLASS_KIND = 'EC2NodeClass'

export const nodeclassReady: Check = {
  meta: {
    id: 'nodeclass-ready',
    title: 'EC2NodeClasses are Ready and every NodePool references one',
    category: 'cluster',
    severity: 'error',
    docs: 'Every EC2NodeClass reports Ready=True (its subnets, security groups, AMIs and instance profile resolved); every NodePool references an existing EC2NodeClass (group karpenter.k8s.aws), is Ready and has limits that allow a node (a `cpu: 0` freeze); without a NodePool Karpenter launches nothing.',
  },
  run(facts) {
    const release = need(facts.kube.release)
    if (release && isLegacy(release)) {
      skip(
        `Karpenter ${releaseVersion(release)?.raw ?? release.chartVersion} uses Provisioners / AWSNodeTemplates: see karpenter-version`,
      )
    }
    const nodePools = need(facts.kube.nodePools)
    const nodeClasses = need(facts.kube.nodeClasses)
    if (!release && nodePools.length === 0 && nodeClasses.length === 0) {
      skip(
        'Karpenter is not installed (no Helm release, no NodePool, no EC2NodeClass): see karpenter-version',
      )
    }
    return [
      ...nodeClasses.map((nc) => judgeNodeClass(facts, nc)),
      ...nodePools.flatMap((np) => judgeNodePool(facts, np, nodeClasses)),
      ...limitFindings(nodePools),
      ...(nodePools.length === 0 ? [noNodePools(facts, nodeClasses)] : []),
    ]
  },
}

/** Resources every node has: a limit of 0 on one of them lets the NodePool launch no node at all. */
const NODE_RESOURCES = ['cpu', 'memory', 'pods', 'nodes', 'ephemeral-storage']
/** `0`, `0m`, `0Gi`, `0.0`, `0e3`: a quantity that is zero whatever its unit. */
const isZero = (q: unknown) => parseQuantity(typeof q === 'number' ? q : String(q)) === 0

/**
 * NodePools whose spec.limits allow nothing (`cpu: 0`: a freeze never lifted). A zero limit on a
 * resource not every node has (`nvidia.com/gpu: 0`) only keeps those nodes out, and is not one. One
 * frozen pool beside others that can launch is a warning (freezing is a way to drain); when every
 * NodePool is frozen, Karpenter launches nothing.
 */
function limitFindings(nodePools: NodePool[]): Finding[] {
  const zeroOf = (np: NodePool) =>
    Object.entries(np.spec.limits ?? {}).filter(([k, v]) => NODE_RESOURCES.includes(k) && isZero(v))
  const frozen = nodePools.filter((np) => zeroOf(np).length > 0)
  const all = frozen.length === nodePools.length
  return frozen.map((np) => {
    const name = np.metadata.name
    const zero = zeroOf(np)
    const unset = Object.fromEntries(zero.map(([k]) => [k, null]))
    return {
      status: all ? 'fail' : 'warn',
      subject: `nodepool/${name}`,
      message: `NodePool ${name} limits ${zero.map(([k, v]) => `${k} to ${String(v)}`).join(' and ')} (spec.limits): Karpenter launches no node from it${all ? ', and no other NodePool can launch one' : ''}`,
      code: 'limits-allow-nothing',
      evidence: { limits: np.spec.limits },
      fix: {
        summary: `lift the limit (or set the capacity NodePool ${name} may grow to)`,
        commands: [
          `kubectl patch nodepool ${name} --type merge -p ${shellQuote(JSON.stringify({ spec: { limits: unset } }))}`,
        ],
      },
    }
  })
}

const ready = (conditions: Condition[] | undefined) => conditions?.find((c) => c.type === 'Ready')
const describe = (c: Condition) =>
  `${c.type}=${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : c.message ? ` (${c.message})` : ''}`

function judgeNodeClass(facts: Facts, nc: EC2NodeClass): Finding {
  const name = nc.metadata.name
  const subject = `ec2nodeclass/${name}`
  const conditions = nc.status?.conditions ?? []
  const r = ready(conditions)
  if (r?.status === 'True') {
    const subnets = nc.status?.subnets?.length
    return {
      status: 'pass',
      subject,
      message: `EC2NodeClass ${name} is Ready${subnets !== undefined ? ` (${subnets} subnets, ${nc.status?.securityGroups?.length ?? 0} security groups)` : ''}`,
    }
  }
  const evidence = {
    conditions,
    role: nc.spec.role ?? null,
    instanceProfile: nc.spec.instanceProfile ?? null,
    subnetSelectorTerms: nc.spec.subnetSelectorTerms,
    securityGroupSelectorTerms: nc.spec.securityGroupSelectorTerms,
  }
  // Some dependents True, some Unknown: the controller runs and resolved the rest, but a reconciler
  // errored before setting this one (Karpenter v1.14.1 returns the error and leaves the condition as it
  // was: a role that does not exist keeps InstanceProfileReady=Unknown, the reason in its log).
  const unresolved = conditions.filter((c) => c.type !== 'Ready' && c.status === 'Unknown')
  if (r?.status === 'Unknown' && unresolved.length > 0 && conditions.some((c) => c.status === 'True')) {
    return {
      status: 'warn',
      subject,
      message: `EC2NodeClass ${name} has ${describe(r)}: Karpenter resolved the rest but not ${unresolved.map(describe).join('; ')} (the controller's log says why)`,
      evidence,
      fix: nodeClassFix(
        facts,
        nc,
        unresolved.map((c) => c.type),
        'read what the controller says about this EC2NodeClass',
      ),
    }
  }
  if (!r || r.status === 'Unknown') {
    return {
      status: 'warn',
      subject,
      message: `EC2NodeClass ${name} has ${r ? describe(r) : 'no Ready condition'}: the controller has not reconciled it (is it running?)`,
      evidence,
      fix: nodeClassFix(
        facts,
        nc,
        [],
        'check that the controller is running and read what it says about this EC2NodeClass',
      ),
    }
  }
  // Ready=False is the roll-up; the specific conditions say which selector or identity failed.
  const failing = conditions.filter((c) => c.type !== 'Ready' && c.status === 'False')
  const reasons = (failing.length > 0 ? failing : [r]).map(describe).join('; ')
  return {
    status: 'fail',
    subject,
    message: `EC2NodeClass ${name} is not Ready: ${reasons}`,
    evidence,
    fix: nodeClassFix(
      facts,
      nc,
      failing.map((c) => c.type),
      'fix what the failing condition names; Karpenter re-resolves the selectors within minutes',
    ),
  }
}

/** The AWS CLI filter that reproduces a selector's id or tag terms (name/alias terms are left to the log). */
function selectorArgs(terms: EC2NodeClass['spec']['subnetSelectorTerms'], idFlag: string): string {
  const ids = terms.map((t) => t.id).filter((id): id is string => !!id)
  if (ids.length > 0) return ` ${idFlag} ${ids.join(' ')}`
  // Terms are ORed by Karpenter but AWS CLI filters are ANDed: reproduce the first tag term only.
  const tags = Object.entries(terms.find((t) => t.tags)?.tags ?? {})
  const filter = ([k, v]: [string, string]) =>
    shellQuote(v === '*' ? `Name=tag-key,Values=${k}` : `Name=tag:${k},Values=${v}`)
  return tags.length > 0 ? ` --filters ${tags.map(filter).join(' ')}` : ''
}

function nodeClassFix(facts: Facts, nc: EC2NodeClass, failing: string[], summary: string): Fix {
  const ns = controllerNamespace(facts)
  const region = facts.meta.region
  const commands = [
    `kubectl get ec2nodeclass ${nc.metadata.name} -o yaml`,
    `kubectl -n ${ns} logs deploy/${controllerDeploymentName(facts)} -c controller | grep ${shellQuote(nc.metadata.name)}`,
  ]
  if (failing.includes('SubnetsReady')) {
    const f = selectorArgs(nc.spec.subnetSelectorTerms, '--subnet-ids')
    commands.push(
      `aws ec2 describe-subnets${f} --region ${region} --query 'Subnets[].[SubnetId,VpcId,AvailabilityZone]'`,
    )
  }
  if (failing.includes('SecurityGroupsReady')) {
    const f = selectorArgs(nc.spec.securityGroupSelectorTerms, '--group-ids')
    commands.push(
      `aws ec2 describe-security-groups${f} --region ${region} --query 'SecurityGroups[].[GroupId,VpcId]'`,
    )
  }
  if (failing.includes('InstanceProfileReady')) {
    commands.push(
      nc.spec.role
        ? `aws iam get-role --role-name ${roleName(nc.spec.role)}`
        : `aws iam get-instance-profile --instance-profile-name ${nc.spec.instanceProfile ?? nc.metadata.name}`,
    )
  }
  if (failing.includes('AMIsReady')) commands.push(...amiCommands(nc))
  const hints: string[] = []
  if (failing.includes('SubnetsReady') || failing.includes('SecurityGroupsReady'))
    hints.push('see also discovery-tags')
  if (failing.includes('InstanceProfileReady')) hints.push('see also node-role and passrole-node-role')
  if (failing.includes('AMIsReady'))
    hints.push(
      'the patch selects the EKS-optimized AMI of the same family at @latest; to keep a pin, select an AMI that exists instead',
    )
  if (failing.includes('ValidationSucceeded'))
    hints.push('see also controller-policy (Karpenter dry-runs its EC2 calls)')
  return { summary: hints.length > 0 ? `${summary} (${hints.join('; ')})` : summary, commands }
}

const roleName = (role: string) => role.slice(role.lastIndexOf('/') + 1)

/** The alias family of each amiFamily (the CRD's CEL ties an alias to its family); Custom has none. */
const ALIAS_FAMILY: Record<string, string> = {
  AL2: 'al2',
  AL2023: 'al2023',
  Bottlerocket: 'bottlerocket',
  Windows2019: 'windows2019',
  Windows2022: 'windows2022',
}

/**
 * AMIsReady=False (Karpenter: `AMINotFound`, "AMISelector did not match any AMIs"): a deregistered or
 * mistyped id, an alias version SSM does not have. The ids are looked up; the fix selects the
 * EKS-optimized AMI of the same family at `@latest`, the family taken from spec.amiFamily or from the
 * alias term. With neither (a Custom family) only the user knows which AMI: no patch is printed.
 */
function amiCommands(nc: EC2NodeClass): string[] {
  const terms = nc.spec.amiSelectorTerms ?? []
  const ids = terms.map((t) => t.id).filter((id): id is string => !!id)
  const aliasFamily = terms.map((t) => t.alias?.split('@')[0]).find((f) => !!f)
  const family = nc.spec.amiFamily ? ALIAS_FAMILY[nc.spec.amiFamily] : aliasFamily
  const patch = { spec: { amiSelectorTerms: [{ alias: `${family}@latest` }] } }
  return [
    // a filter, as Karpenter asks: an id that does not exist lists nothing instead of failing
    ...(ids.length > 0
      ? [
          `aws ec2 describe-images --filters Name=image-id,Values=${ids.join(',')} --query 'Images[].[ImageId,Name,State]'`,
        ]
      : []),
    ...(family
      ? [
          `kubectl patch ec2nodeclass ${shellQuote(nc.metadata.name)} --type merge -p ${shellQuote(JSON.stringify(patch))}`,
        ]
      : []),
  ]
}

function judgeNodePool(facts: Facts, np: NodePool, nodeClasses: EC2NodeClass[]): Finding[] {
  const name = np.metadata.name
  const subject = `nodepool/${name}`
  const ref = np.spec.template.spec.nodeClassRef
  const evidence = { nodeClassRef: ref, conditions: np.status?.conditions ?? [] }
  if (ref.group !== NODECLASS_GROUP || ref.kind !== NODECLASS_KIND) {
    return [
      {
        status: 'fail',
        subject,
        message: `NodePool ${name} references ${ref.kind} ${ref.name} in group ${ref.group || '(none)'}, not an ${NODECLASS_KIND} (${NODECLASS_GROUP}): Karpenter on AWS cannot launch from it`,
        code: 'nodeclassref-immutable',
        evidence: { ...evidence, manualBecause: RECREATE_WHY },
        fix: recreateFix(name, ref.name, nodeClasses),
      },
    ]
  }
  if (!nodeClasses.some((nc) => nc.metadata.name === ref.name)) {
    return [
      {
        status: 'fail',
        subject,
        message: `NodePool ${name} references EC2NodeClass ${ref.name}, which does not exist`,
        evidence: { ...evidence, existing: nodeClasses.map((nc) => nc.metadata.name) },
        fix: refFix(name, ref.name, nodeClasses),
      },
    ]
  }
  const r = ready(np.status?.conditions)
  // Karpenter (v1.14.1 nodepool/readiness) sets NodeClassReady=False (NodeClassReadinessUnknown) while
  // the class's own Ready is Unknown or absent: the NodePool waits on a class not resolved yet (the
  // seconds after an install, seen on the bed), which the class's finding already says. Not a failure.
  const classReady = ready(nodeClasses.find((nc) => nc.metadata.name === ref.name)?.status?.conditions)
  if (r && r.status === 'False' && (!classReady || classReady.status === 'Unknown')) {
    const waiting = np.status?.conditions?.find((c) => c.type === 'NodeClassReady')
    return [
      {
        status: 'warn',
        subject,
        message: `NodePool ${name} is not Ready${waiting ? ` (${describe(waiting)})` : ''}: it waits for EC2NodeClass ${ref.name}, which Karpenter has not resolved yet`,
        evidence,
        fix: {
          summary: `see the finding on EC2NodeClass ${ref.name}; the NodePool turns Ready when it does`,
          commands: [`kubectl get ec2nodeclass ${shellQuote(ref.name)} -o yaml`],
        },
      },
    ]
  }
  if (r && r.status === 'False') {
    return [
      {
        status: 'fail',
        subject,
        message: `NodePool ${name} is not Ready: ${describe(r)}`,
        evidence,
        fix: {
          summary: 'read the NodePool status; a NodePool is not Ready while its EC2NodeClass is not',
          commands: [
            `kubectl get nodepool ${name} -o jsonpath='{.status.conditions}'`,
            `kubectl describe nodepool ${name}`,
          ],
        },
      },
    ]
  }
  return [
    {
      status: 'pass',
      subject,
      message: `NodePool ${name} uses EC2NodeClass ${ref.name}${r?.status === 'True' ? ' and is Ready' : ''}`,
      evidence,
    },
  ]
}

/** The EC2NodeClass a NodePool should name: the one it names if that exists, else the first. */
const targetOf = (wanted: string, nodeClasses: EC2NodeClass[]) =>
  nodeClasses.find((nc) => nc.metadata.name === wanted)?.metadata.name ?? nodeClasses[0]?.metadata.name

const refPatch = (name: string) => ({
  spec: { template: { spec: { nodeClassRef: { group: NODECLASS_GROUP, kind: NODECLASS_KIND, name } } } },
})

const RECREATE_WHY =
  "the NodePool's nodeClassRef.group and .kind are immutable (the API server refuses a patch): it must be deleted and created again, and deleting a NodePool makes Karpenter delete its NodeClaims (their nodes drain)"

/**
 * nodeClassRef.group and .kind cannot be patched (the CRD's CEL rules `self.group == oldSelf.group`):
 * the NodePool is recreated from its own manifest with the reference corrected. A NodePool whose
 * reference names no EC2NodeClass never launched a node, so deleting it drains nothing; the first
 * command proves it, and the copy is written before anything is deleted.
 */
function recreateFix(pool: string, wanted: string, nodeClasses: EC2NodeClass[]): Fix {
  const target = targetOf(wanted, nodeClasses)
  if (!target)
    return {
      summary: `create an EC2NodeClass (${wanted}), then recreate NodePool ${pool} naming it: ${RECREATE_WHY}`,
      commands: [`kubectl get ec2nodeclasses`],
    }
  const saved = shellQuote(`nodepool-${pool}.yaml`)
  const fixed = shellQuote(`nodepool-${pool}.fixed.yaml`)
  // What the API server sets is dropped, or create refuses the copy (resourceVersion) or keeps stale state.
  const patch = {
    metadata: {
      resourceVersion: null,
      uid: null,
      creationTimestamp: null,
      generation: null,
      managedFields: null,
    },
    status: null,
    ...refPatch(target),
  }
  const np = shellQuote(pool)
  return {
    summary: `recreate NodePool ${pool} pointing at EC2NodeClass ${target}: ${RECREATE_WHY}. In this order: check that no NodeClaim belongs to it (it cannot have launched any; if the first command lists some, create the corrected copy under another name and wait for its nodes before deleting ${pool}), save it, write the corrected copy, delete it, create the copy`,
    commands: [
      `kubectl get nodeclaims -l ${shellQuote(`karpenter.sh/nodepool=${pool}`)}`,
      `kubectl get nodepool ${np} -o yaml > ${saved}`,
      `kubectl patch --local -f ${saved} --type merge -p ${shellQuote(JSON.stringify(patch))} -o yaml > ${fixed}`,
      `kubectl delete nodepool ${np}`,
      `kubectl create -f ${fixed}`,
    ],
  }
}

/** Only nodeClassRef.name is wrong: it is mutable, so a patch does it. */
function refFix(pool: string, wanted: string, nodeClasses: EC2NodeClass[]): Fix {
  const target = targetOf(wanted, nodeClasses)
  const patch = JSON.stringify(refPatch(target ?? wanted))
  return {
    summary: target
      ? `point the NodePool at EC2NodeClass ${target} (or create EC2NodeClass ${wanted})`
      : `create EC2NodeClass ${wanted}, then the NodePool resolves`,
    commands: target
      ? [`kubectl patch nodepool ${shellQuote(pool)} --type merge -p ${shellQuote(patch)}`]
      : [`kubectl get ec2nodeclasses`],
  }
}

function noNodePools(facts: Facts, nodeClasses: EC2NodeClass[]): Finding {
  const nodeClass = nodeClasses[0]?.metadata.name ?? 'default'
  const nodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: ${yamlString(nodeClass)}
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
  limits:
    cpu: "1000"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`
  const cluster = facts.meta.clusterName
  const nodeClassYaml = `---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: ${yamlString(`KarpenterNodeRole-${cluster}`)}
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: ${yamlString(cluster)}
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: ${yamlString(cluster)}
`
  return {
    status: 'warn',
    subject: facts.meta.clusterName,
    message: `no NodePool exists: Karpenter will launch nothing${nodeClasses.length === 0 ? ' (and there is no EC2NodeClass either)' : ''}`,
    evidence: { nodeClasses: nodeClasses.map((nc) => nc.metadata.name) },
    fix: {
      summary: `apply a minimal NodePool${nodeClasses.length === 0 ? ' and EC2NodeClass (adjust the role name to your node role)' : ''} with kubectl apply -f`,
      snippet: { language: 'yaml', text: nodeClasses.length === 0 ? nodePool + nodeClassYaml : nodePool },
    },
  }
}
