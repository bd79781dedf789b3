// doctor --fix: for each failing finding whose repair is safe to automate, the resources that repair it —
// the same resource kinds, policies and names install uses, never a second copy. Everything else is
// listed as manual, with the commands doctor already prints.
import type { CheckResult, Finding } from '../checks/types.js'
import type { Facts, PolicyDocument, PolicyStatement } from '../facts/types.js'
import { awsAuthEntry } from '../plan/resources/aws-auth.js'
import { discoveryTags, DISCOVERY_TAG } from '../plan/resources/discovery-tags.js'
import { accessEntry } from '../plan/resources/eks-access.js'
import { eventRule } from '../plan/resources/event-rule.js'
import { inlinePolicy } from '../plan/resources/inline-policy.js'
import { roleTrust } from '../plan/resources/role-trust.js'
import { serviceAccountAnnotation } from '../plan/resources/sa-annotation.js'
import { spotRole } from '../plan/resources/spot-role.js'
import { webhookIngress } from '../plan/resources/webhook-ingress.js'
import type { Resource } from '../plan/types.js'
import { ownershipTags } from '../spec/install.js'
import { MANAGED_LABEL } from '../spec/karpenter.js'
import { interruptionRules, RULE_TARGET_ID } from '../spec/interruption.js'
import { passRolePolicy } from '../spec/tenant.js'

export interface Manual {
  check: string
  message: string
  why: string
  commands: string[]
}

export interface FixSet {
  resources: Resource[]
  manual: Manual[]
  /** Check ids whose failures the resources repair (re-judged after the apply). */
  touched: string[]
}

type Builder = (
  facts: Facts,
  failing: Finding[],
  check: string,
) => { resources: Resource[]; manual: Finding[] }

const arn = (f: Facts, service: string, resource: string, region = f.meta.region) =>
  `arn:${f.meta.partition}:${service}:${region}:${f.meta.accountId ?? ''}:${resource}`
const group = (check: string) => `fix: ${check}`

const sgWebhook: Builder = (facts, failing, check) => ({
  resources: failing.flatMap((f) => {
    const e = f.evidence as { securityGroup?: string; clusterSecurityGroup?: string } | undefined
    if (!e?.securityGroup || !e.clusterSecurityGroup) return []
    const r = webhookIngress({
      nodeGroupId: e.securityGroup,
      clusterGroupId: e.clusterSecurityGroup,
      arn: arn(facts, 'ec2', `security-group/${e.securityGroup}`),
    })
    return [{ ...r, address: `${r.address}.${e.securityGroup}`, group: group(check) }]
  }),
  manual: failing.filter((f) => !(f.evidence as { securityGroup?: string } | undefined)?.securityGroup),
})

/** Only the plain discovery selector (`karpenter.sh/discovery=<cluster>`) is fixed by tagging; a custom one is the user's design. */
const discovery: Builder = (facts, failing, check) => {
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const plain = (f: Finding) => {
    const sel = (f.evidence as { selector?: { tags?: Record<string, string>; id?: string }[] } | undefined)
      ?.selector
    return (
      !!sel?.length &&
      sel.every(
        (t) =>
          !t.id && JSON.stringify(t.tags) === JSON.stringify({ [DISCOVERY_TAG]: facts.meta.clusterName }),
      )
    )
  }
  const subnets = failing.filter((f) => f.message.startsWith('subnet selector') && plain(f))
  const groups = failing.filter((f) => f.message.startsWith('security-group selector') && plain(f))
  const auto = new Set([...subnets, ...groups])
  const sg = cluster?.clusterSecurityGroupId ?? cluster?.securityGroupIds[0]
  const resources: Resource[] =
    cluster && auto.size
      ? [
          {
            ...discoveryTags({
              clusterName: facts.meta.clusterName,
              subnetIds: subnets.length ? cluster.subnetIds : [],
              securityGroupIds: groups.length && sg ? [sg] : [],
              region: facts.meta.region,
              accountId: facts.meta.accountId ?? '',
              partition: facts.meta.partition,
            }),
            group: group(check),
          },
        ]
      : []
  return { resources, manual: failing.filter((f) => !auto.has(f) || !cluster) }
}

const passRole: Builder = (facts, failing, check) => {
  const controller = facts.iam.controllerRoleName
  // A permissions boundary that denies PassRole is another policy's decision: an inline grant cannot help.
  const boundaryDenies = (f: Finding) => {
    const d = (f.evidence as { permissionsBoundary?: { decision?: string } } | undefined)?.permissionsBoundary
      ?.decision
    return d !== undefined && d !== 'allowed'
  }
  const grantable = failing.filter((f) => f.subject?.startsWith('arn:') && !boundaryDenies(f))
  const roles = grantable.map((f) => f.subject as string)
  if (!controller || roles.length === 0) return { resources: [], manual: failing }
  return {
    resources: [
      inlinePolicy({
        address: 'iam-policy.passrole-fix',
        roleName: controller,
        roleArn: arn(facts, 'iam', `role/${controller}`, ''),
        policyName: 'KarpctlPassNodeRoles',
        document: passRolePolicy([...new Set(roles)].sort(), 'AllowPassingNodeRoles'),
        dependsOn: [],
      }),
    ].map((r) => ({ ...r, group: group(check) })),
    manual: failing.filter((f) => !grantable.includes(f)),
  }
}

/** The IRSA statement narrowed to the running service account: exact :sub and :aud, StringEquals. */
export function narrowTrust(
  trust: PolicyDocument,
  statement: PolicyStatement,
  issuer: string,
  expectedSub: string,
): PolicyDocument {
  const host = issuer.replace(/^https:\/\//, '')
  const fixed: PolicyStatement = { ...statement, Condition: {} }
  for (const [op, kv] of Object.entries(statement.Condition ?? {})) {
    const rest = Object.fromEntries(
      Object.entries(kv).filter(([k]) => k !== `${host}:sub` && k !== `${host}:aud`),
    )
    if (Object.keys(rest).length) fixed.Condition![op] = rest
  }
  fixed.Condition!.StringEquals = {
    ...(fixed.Condition!.StringEquals ?? {}),
    [`${host}:aud`]: 'sts.amazonaws.com',
    [`${host}:sub`]: expectedSub,
  }
  return {
    ...trust,
    Statement: trust.Statement.map((s) => (JSON.stringify(s) === JSON.stringify(statement) ? fixed : s)),
  }
}

const irsaTrust: Builder = (facts, failing, check) => {
  const name = facts.iam.controllerRoleName
  const role = name ? facts.iam.roles[name] : undefined
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const issuer = cluster?.oidcIssuer?.replace(/^https:\/\//, '')
  if (!name || !role?.ok || !role.value || !issuer) return { resources: [], manual: failing }
  const stack = role.value.role.tags['aws:cloudformation:stack-name']
  let trust = role.value.role.trust
  const auto: Finding[] = []
  for (const f of failing) {
    const e = f.evidence as
      { statement?: PolicyStatement; expectedSub?: string; trust?: PolicyDocument } | undefined
    if (stack || !e?.expectedSub) continue
    const stmt =
      e.statement ??
      trust.Statement.find((s) => JSON.stringify(s.Principal ?? '').includes(`oidc-provider/${issuer}`))
    if (!stmt) continue
    trust = narrowTrust(trust, stmt, issuer, e.expectedSub)
    auto.push(f)
  }
  const manual = failing
    .filter((f) => !auto.includes(f))
    .map((f) =>
      stack
        ? { ...f, message: `${f.message} (role managed by CloudFormation stack ${stack}: change it there)` }
        : f,
    )
  if (!auto.length) return { resources: [], manual }
  const expected = (auto[0]!.evidence as { expectedSub: string }).expectedSub
  return {
    resources: [
      roleTrust({
        address: 'iam-trust.controller',
        roleName: name,
        roleArn: role.value.role.arn,
        trust,
        why: `irsa :sub narrowed to ${expected}`,
        group: group(check),
      }),
    ],
    manual,
  }
}

const stsAnnotation: Builder = (facts, failing, check) => {
  const sa = facts.kube.serviceAccount.ok ? facts.kube.serviceAccount.value : null
  const helmManaged = sa?.metadata.labels?.['app.kubernetes.io/managed-by'] === 'Helm'
  const missingLive = failing.filter((f) => /missing on the live ServiceAccount/.test(f.message))
  if (!sa || helmManaged || missingLive.length === 0) return { resources: [], manual: failing }
  return {
    resources: [
      serviceAccountAnnotation({
        namespace: sa.metadata.namespace ?? 'kube-system',
        name: sa.metadata.name,
        key: 'eks.amazonaws.com/sts-regional-endpoints',
        value: 'true',
        group: group(check),
      }),
    ],
    manual: failing.filter((f) => !missingLive.includes(f)),
  }
}

const spot: Builder = (facts, _failing, check) => ({
  resources: [{ ...spotRole(facts.meta.accountId ?? '', facts.meta.partition), group: group(check) }],
  manual: [],
})

/** Missing rules are created as install names them; a rule that exists but is wrong stays the user's. */
const rules: Builder = (facts, failing, check) => {
  const q = facts.sqs.queue.ok ? facts.sqs.queue.value : null
  const missing = failing.filter((f) => f.message.startsWith('no EventBridge rule matches'))
  if (!q) return { resources: [], manual: failing }
  const wanted = interruptionRules(facts.meta.clusterName).filter((r) =>
    missing.some((f) => f.subject === `${r.eventPattern.source[0]} / ${r.eventPattern['detail-type'][0]}`),
  )
  const tags = ownershipTags(facts.meta.clusterName)
  return {
    resources: wanted.map((r) => ({
      ...eventRule({
        key: r.key,
        name: r.name,
        arn: arn(facts, 'events', `rule/${r.name}`),
        eventPattern: r.eventPattern,
        queueArn: q.arn,
        targetId: RULE_TARGET_ID,
        tags,
        ownership: tags,
        adopt: false,
      }),
      dependsOn: [],
      group: group(check),
    })),
    manual: failing.filter(
      (f) =>
        !missing.includes(f) ||
        !wanted.some(
          (r) => f.subject === `${r.eventPattern.source[0]} / ${r.eventPattern['detail-type'][0]}`,
        ),
    ),
  }
}

/** A node role without cluster access gets it the way the cluster's authentication mode allows. */
const nodeAccess: Builder = (facts, failing, check) => {
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const entries =
    cluster?.authenticationMode === 'API' || cluster?.authenticationMode === 'API_AND_CONFIG_MAP'
  const noAccess = failing.filter(
    (f) => /has no cluster access/.test(f.message) && f.subject?.startsWith('arn:'),
  )
  const tags = ownershipTags(facts.meta.clusterName)
  const clusterArn = arn(facts, 'eks', `cluster/${facts.meta.clusterName}`)
  return {
    resources: noAccess.map((f, i) => {
      const roleArn = f.subject as string
      const r = entries
        ? accessEntry({
            clusterName: facts.meta.clusterName,
            principalArn: roleArn,
            clusterArn,
            tags,
            dependsOn: [],
          })
        : awsAuthEntry({
            roleArn: roleArn.replace(/:role\/.*\//, ':role/'),
            dependsOn: [],
            managedLabel: [MANAGED_LABEL, 'karpctl'],
          })
      return { ...r, address: `${r.address}.${i}`, group: group(check) }
    }),
    manual: failing.filter((f) => !noAccess.includes(f)),
  }
}

/** Checks with an automatic fix; every other failing check is manual. */
const BUILDERS: Record<string, Builder> = {
  'sg-webhook-8443': sgWebhook,
  'discovery-tags': discovery,
  'passrole-node-role': passRole,
  'irsa-trust-policy': irsaTrust,
  'sts-regional-annotation': stsAnnotation,
  'spot-service-linked-role': spot,
  'interruption-rules': rules,
  'node-role': nodeAccess,
}

const WHY_MANUAL: Record<string, string> = {
  'helm-release': 'a Helm release needs a decision (roll back, or upgrade with corrected values)',
  'karpenter-version': 'an upgrade of Karpenter is a planned change, not a repair',
  'toleration-value-types': 'the Helm values are yours: upgrade with --set-string (below)',
  'tenant-isolation': "a tenant's NodePool is that tenant's design",
  'controller-policy': 'a role another tool manages: add the statements there (below)',
  // put-key-policy replaces the whole policy of a key its owner may manage elsewhere (Terraform, CDK).
  'ebs-kms-key': "a KMS key policy is its owner's: apply the statements there, or run the command (below)",
}

export function fixSet(facts: Facts, results: CheckResult[], selected?: (id: string) => boolean): FixSet {
  const out: FixSet = { resources: [], manual: [], touched: [] }
  for (const r of results) {
    const failing = r.findings.filter((f) => f.status === 'fail')
    if (failing.length === 0 || (selected && !selected(r.meta.id))) continue
    const build = BUILDERS[r.meta.id]
    const { resources, manual } = build
      ? build(facts, failing, r.meta.id)
      : { resources: [], manual: failing }
    if (resources.length) out.touched.push(r.meta.id)
    out.resources.push(...resources)
    for (const f of manual)
      out.manual.push({
        check: r.meta.id,
        message: f.message,
        why: WHY_MANUAL[r.meta.id] ?? 'needs a human decision',
        commands: f.fix?.commands ?? [],
      })
  }
  return out
}
