import type { EC2NodeClass, Facts, NodePool, Taint } from '../facts/types.js'
import { PASS_NODE_ROLES_POLICY, passRolePolicy } from '../desired/controller-policy.js'
import { need, partitionOf, roleNameFromArn, shellQuote, skip, yamlString } from './lib/facts.js'
import {
  accessEntryCommand,
  createNodeRoleCommands,
  takesAccessEntries,
  withMappingAlternative,
} from './lib/node-access.js'
import { nodeRoleArnsInUse } from './passrole-node-role.js'
import type { Check, Finding, Fix } from './types.js'
import { TENANT_KEY } from '../desired/ownership.js'

export const tenantIsolation: Check = {
  meta: {
    id: 'tenant-isolation',
    title: "Tenant NodePools taint and label their nodes, and tenants don't share a node role",
    category: 'tenancy',
    severity: 'error',
    docs: `Tenants are NodePools labelled ${TENANT_KEY}=<name> (or tainted NoSchedule with a tenant key). Each must taint its nodes NoSchedule (so other workloads stay off) and label them (so the tenant's workloads can select them), and each tenant's EC2NodeClass must use its own node role (its IAM policies are the tenant's).`,
  },
  run(facts) {
    const nodePools = need(facts.kube.nodePools)
    const nodeClasses = need(facts.kube.nodeClasses)
    const tenants = nodePools.flatMap((np) => {
      const t = tenantOf(np)
      return t ? [{ pool: np, tenant: t }] : []
    })
    if (tenants.length === 0) {
      skip(
        `no tenant NodePools (none labelled ${TENANT_KEY}=<name> or tainted NoSchedule with a tenant key): nothing to isolate`,
      )
    }
    return [
      ...tenants.map(({ pool, tenant }) => judgeMarking(pool, tenant)),
      ...judgeRoles(facts, nodePools, nodeClasses),
    ]
  },
}

const isTenantKey = (key: string) => key === 'tenant' || key.endsWith('/tenant')
const blocks = (t: Taint) => t.effect === 'NoSchedule' || t.effect === 'NoExecute'

/** The tenant a NodePool serves: karpctl's label, else a NoSchedule taint with a tenant key. */
function tenantOf(np: NodePool): string | null {
  const label = np.metadata.labels?.[TENANT_KEY]
  if (label) return label
  const taint = np.spec.template.spec.taints?.find((t) => t.effect === 'NoSchedule' && isTenantKey(t.key))
  return taint ? taint.value || np.metadata.name : null
}

function judgeMarking(np: NodePool, tenant: string): Finding {
  const name = np.metadata.name
  const spec = np.spec.template.spec
  const taints = spec.taints ?? []
  const labels = np.spec.template.metadata?.labels ?? {}
  const taint = taints.find((t) => blocks(t) && isTenantKey(t.key) && t.value === tenant)
  const labelKey = Object.keys(labels).find((k) => isTenantKey(k) && labels[k] === tenant)
  const evidence = { tenant, taints, labels }
  if (taint && labelKey) {
    return {
      status: 'pass',
      subject: `nodepool/${name}`,
      message: `tenant ${tenant}: NodePool ${name} taints its nodes ${taint.key}=${tenant}:${taint.effect} and labels them ${labelKey}=${tenant}`,
      evidence,
    }
  }
  const problems: string[] = []
  const wrong = taints.find((t) => isTenantKey(t.key) && t.value !== tenant)
  if (!taint) {
    problems.push(
      wrong
        ? `its tenant taint ${wrong.key}=${wrong.value ?? ''}:${wrong.effect} does not name tenant ${tenant}`
        : 'no NoSchedule taint keeps other workloads off its nodes',
    )
  }
  if (!labelKey)
    problems.push(`its nodes carry no ${TENANT_KEY}=${tenant} label for the tenant's workloads to select`)
  return {
    status: 'fail',
    subject: `nodepool/${name}`,
    message: `tenant ${tenant}: NodePool ${name} is not isolated: ${problems.join('; ')}`,
    evidence,
    fix: markingFix(np, tenant, taints, labels, !taint, !labelKey),
  }
}

function markingFix(
  np: NodePool,
  tenant: string,
  taints: Taint[],
  labels: Record<string, string>,
  addTaint: boolean,
  addLabel: boolean,
): Fix {
  // Merge patches replace lists, so the patch carries the NodePool's other taints too.
  const keep = taints.filter((t) => !isTenantKey(t.key))
  const newTaints = addTaint ? [...keep, { key: TENANT_KEY, value: tenant, effect: 'NoSchedule' }] : taints
  const newLabels = addLabel ? { ...labels, [TENANT_KEY]: tenant } : labels
  const patch = { spec: { template: { metadata: { labels: newLabels }, spec: { taints: newTaints } } } }
  const yaml = [
    'spec:',
    '  template:',
    '    metadata:',
    '      labels:',
    `        ${TENANT_KEY}: ${yamlString(tenant)}`,
    '    spec:',
    '      taints:',
    `        - key: ${TENANT_KEY}`,
    `          value: ${yamlString(tenant)}`,
    '          effect: NoSchedule',
    '',
  ].join('\n')
  return {
    summary: `taint and label the nodes of NodePool ${np.metadata.name} for tenant ${tenant} (existing nodes are replaced through drift); the tenant's pods then need nodeSelector ${TENANT_KEY}: ${tenant} and a toleration for the taint`,
    commands: [`kubectl patch nodepool ${np.metadata.name} --type merge -p '${JSON.stringify(patch)}'`],
    snippet: { language: 'yaml', text: yaml },
  }
}

/** The node identity a NodePool's EC2NodeClass gives its nodes: the role, resolved through the instance profile if need be. */
function identityOf(facts: Facts, nc: EC2NodeClass): string | null {
  if (nc.spec.role) return roleNameFromArn(nc.spec.role)
  const profile = nc.spec.instanceProfile
  if (!profile) return null
  const read = facts.iam.instanceProfiles[profile]
  const role = read?.ok ? read.value?.roles[0] : undefined
  return role ? roleNameFromArn(role) : `instance-profile/${profile}`
}

/** Why doctor --fix leaves a shared role to a human (doctor prints the commands). */
const OWN_ROLE_WHY =
  "a tenant's own node role is a design change: the policies its nodes get are the tenant's, and its nodes are replaced (drift) once its EC2NodeClass names the new role"

interface Use {
  tenant: string | null
  pool: string
  nodeClass: string
}

function judgeRoles(facts: Facts, nodePools: NodePool[], nodeClasses: EC2NodeClass[]): Finding[] {
  const byRole = new Map<string, Use[]>()
  for (const np of nodePools) {
    const nc = nodeClasses.find((c) => c.metadata.name === np.spec.template.spec.nodeClassRef.name)
    const role = nc ? identityOf(facts, nc) : null
    if (!nc || !role) continue // a missing EC2NodeClass is nodeclass-ready's finding
    byRole.set(role, [
      ...(byRole.get(role) ?? []),
      { tenant: tenantOf(np), pool: np.metadata.name, nodeClass: nc.metadata.name },
    ])
  }
  const findings: Finding[] = []
  for (const [role, uses] of byRole) {
    const tenants = [...new Set(uses.map((u) => u.tenant).filter((t): t is string => t !== null))]
    if (tenants.length === 0) continue
    const shared = uses.filter((u) => u.tenant === null)
    const evidence = { role, nodePools: uses, manualBecause: OWN_ROLE_WHY }
    if (tenants.length > 1) {
      findings.push({
        status: 'fail',
        subject: role,
        message: `tenants ${tenants.join(', ')} share node role ${role}: each tenant's nodes get every other tenant's IAM permissions`,
        evidence,
        // The first tenant may keep the role only if no non-tenant NodePool uses it too: else it would
        // go on sharing it with them.
        fix: ownRoleFix(facts, role, uses, shared.length > 0 ? tenants : tenants.slice(1)),
      })
    } else if (shared.length > 0) {
      findings.push({
        status: 'warn',
        subject: role,
        message: `tenant ${tenants[0]} shares node role ${role} with non-tenant NodePool${shared.length > 1 ? 's' : ''} ${shared.map((u) => u.pool).join(', ')}: its policies reach nodes outside the tenant`,
        evidence,
        fix: ownRoleFix(facts, role, uses, tenants),
      })
    } else {
      findings.push({
        status: 'pass',
        subject: role,
        message: `tenant ${tenants[0]} has its own node role ${role}`,
        evidence: { role, nodePools: uses },
      })
    }
  }
  return findings
}

/**
 * The patch that points an EC2NodeClass at `role`. The CRD allows exactly one of spec.role and
 * spec.instanceProfile, so a class launching through an instance profile has it removed in the same patch
 * (a merge patch's null), else the API server refuses the patch.
 */
function roleSwitch(facts: Facts, nc: string, role: string): string {
  const cls = facts.kube.nodeClasses.ok
    ? facts.kube.nodeClasses.value.find((c) => c.metadata.name === nc)
    : undefined
  const spec = cls?.spec.instanceProfile ? { role, instanceProfile: null } : { role }
  return `kubectl patch ec2nodeclass ${shellQuote(nc)} --type merge -p ${shellQuote(JSON.stringify({ spec }))}`
}

/**
 * Commands that give each of `tenants` its own node role, named as karpctl names tenant roles. The
 * controller may pass only the node roles it is granted: the new roles are granted before any
 * EC2NodeClass names them (else nodes fail to launch until passrole-node-role's fix), in the one
 * inline policy that fix writes, naming every role in use (put-role-policy replaces it whole).
 */
function ownRoleFix(facts: Facts, sharedRole: string, uses: Use[], tenants: string[]): Fix {
  const { clusterName, accountId } = facts.meta
  const partition = partitionOf(facts)
  const made: string[] = []
  const patches: string[] = []
  const sharedClasses: string[] = []
  const roleArns: string[] = []
  for (const tenant of tenants) {
    const role = `KarpenterNodeRole-${clusterName}-${tenant}`
    roleArns.push(`arn:${partition}:iam::${accountId ?? '<account-id>'}:role/${role}`)
    made.push(
      ...createNodeRoleCommands(facts, role, { 'karpctl.io/cluster': clusterName, [TENANT_KEY]: tenant }),
    )
    const classes = [...new Set(uses.filter((u) => u.tenant === tenant).map((u) => u.nodeClass))]
    for (const nc of classes) {
      // Patching a class that other tenants also use would just move the sharing.
      if (uses.some((u) => u.nodeClass === nc && u.tenant !== tenant)) sharedClasses.push(nc)
      else patches.push(roleSwitch(facts, nc, role))
    }
  }
  const controller = facts.iam.controllerRoleName ?? `KarpenterControllerRole-${clusterName}`
  const passable = [...new Set([...nodeRoleArnsInUse(facts), ...roleArns])].sort()
  const grant = `aws iam put-role-policy --role-name ${shellQuote(controller)} --policy-name ${PASS_NODE_ROLES_POLICY} --policy-document ${shellQuote(JSON.stringify(passRolePolicy(passable)))}`
  const steps = (access: string[]) => [...made, ...access, grant, ...patches]
  const split =
    sharedClasses.length > 0
      ? `; EC2NodeClass ${[...new Set(sharedClasses)].join(', ')} serves several tenants: copy it once per tenant and point each tenant's NodePool at its own copy`
      : ''
  const summary = `give ${tenants.join(', ')} their own node role instead of ${sharedRole}, with the tenant's own policies attached, cluster access (access entry, or aws-auth on CONFIG_MAP clusters) and iam:PassRole for ${controller} on every node role in use (the ${PASS_NODE_ROLES_POLICY} policy passrole-node-role's fix writes), granted before the EC2NodeClass names the role${split}`
  if (takesAccessEntries(facts))
    return { summary, commands: steps(roleArns.map((a) => accessEntryCommand(facts, a))) }
  return withMappingAlternative(
    `${summary}; aws-auth with eksctl, or without it (below)`,
    steps,
    facts,
    roleArns,
  )
}
