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
import { attachedPolicies } from '../plan/resources/attached-policies.js'
import { podIdentityAssociation } from '../plan/resources/eks-access.js'
import { queuePolicyStatements } from '../plan/resources/queue-policy.js'
import type { DeploymentRef } from '../plan/resources/restart.js'
import { ruleRepair } from '../plan/resources/rule-repair.js'
import { sqsQueue } from '../plan/resources/sqs-queue.js'
import type { Resource } from '../plan/types.js'
import { INLINE_LIMIT } from '../checks/controller-policy.js'
import { controllerDeploymentName, controllerNamespace } from '../checks/lib/install.js'
import { controllerServiceAccount } from '../checks/lib/trust.js'
import { nodeRolePolicies } from '../install/resources.js'
import { parseHelmPath } from '../lint/values.js'
import { QUEUE_ATTRIBUTES, queuePolicy } from '../spec/interruption.js'
import { ownershipTags } from '../spec/install.js'
import {
  editedValues,
  helmRepair,
  valueTypeEdits,
  type HelmFixOptions,
  type ValueEdit,
} from './helm-values.js'
import { MANAGED_LABEL } from '../spec/karpenter.js'
import { interruptionRules, RULE_TARGET_ID } from '../spec/interruption.js'
import { patternMatchesEvent } from '../facts/collect-interruption.js'
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

interface Built {
  resources: Resource[]
  manual: Finding[]
  /** Repairs in the Helm values: every check's go into one new revision of the release. */
  values?: ValueEdit[]
}

type Builder = (facts: Facts, failing: Finding[], check: string, opts: FixOptions) => Built

export interface FixOptions extends HelmFixOptions {
  /** Which checks may be fixed (--only / --skip); the others' failures are left alone. */
  selected?: (id: string) => boolean
}

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

const spot: Builder = (facts, _failing, check) => ({
  resources: [{ ...spotRole(facts.meta.accountId ?? '', facts.meta.partition), group: group(check) }],
  manual: [],
})

/** Rules for no rule at all, created as install names them (after the queue, when this plan makes it). */
const missingRules: Builder = (facts, failing, check) => {
  const q = facts.sqs.queue.ok ? facts.sqs.queue.value : null
  const missing = failing.filter((f) => f.message.startsWith('no EventBridge rule matches'))
  if (!q) return { resources: [], manual: failing }
  const subject = (r: RuleSpecOf) => `${r.eventPattern.source[0]} / ${r.eventPattern['detail-type'][0]}`
  const wanted = interruptionRules(facts.meta.clusterName).filter((r) =>
    missing.some((f) => f.subject === subject(r)),
  )
  return {
    resources: wanted.map((r) => installRule(facts, r, q.arn, check, [])),
    manual: failing.filter((f) => !missing.includes(f) || !wanted.some((r) => f.subject === subject(r))),
  }
}

type RuleSpecOf = ReturnType<typeof interruptionRules>[number]

/** One rule as install makes it (name, pattern, target, karpctl's tags). */
function installRule(facts: Facts, r: RuleSpecOf, queueArn: string, check: string, dependsOn: string[]) {
  const tags = ownershipTags(facts.meta.clusterName)
  return {
    ...eventRule({
      key: r.key,
      name: r.name,
      arn: arn(facts, 'events', `rule/${r.name}`),
      eventPattern: r.eventPattern,
      queueArn,
      targetId: RULE_TARGET_ID,
      tags,
      ownership: tags,
      adopt: false,
    }),
    dependsOn,
    group: group(check),
  }
}

/** A queue this plan creates gets the rules that do not already send to it (interruption-rules skips
 * while the queue is missing, so they would otherwise take a second --fix). */
function rulesForNewQueue(facts: Facts, queueArn: string, check: string): Resource[] {
  const existing = facts.events.rules.ok ? facts.events.rules.value : []
  return interruptionRules(facts.meta.clusterName)
    .filter(
      (r) =>
        !existing.some(
          (x) =>
            x.targetArns.includes(queueArn) &&
            patternMatchesEvent(x.eventPattern, r.eventPattern.source[0]!, r.eventPattern['detail-type'][0]!),
        ),
    )
    .map((r) => installRule(facts, r, queueArn, check, ['sqs-queue.interruption']))
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

const release = (facts: Facts) => (facts.kube.release.ok ? facts.kube.release.value : null)

/** The controller Deployment, restarted after a change its pods read only when they start. */
const controllerDeployment = (facts: Facts): DeploymentRef => ({
  namespace: controllerNamespace(facts),
  name: controllerDeploymentName(facts),
})

/** Toleration, annotation and label values that are not strings: set as strings in the one Helm repair. */
const valueTypes: Builder = (facts, failing) => {
  const r = release(facts)
  const values = r ? valueTypeEdits(r, failing) : []
  const covered = new Set(values.map((e) => e.finding))
  return { resources: [], manual: failing.filter((f) => !covered.has(f)), values }
}

/** A boolean in the values goes through Helm; a missing live annotation Helm does not manage, kubectl. */
const stsAnnotation: Builder = (facts, failing, check, opts) => {
  const typed = valueTypes(facts, failing, check, opts)
  const sa = facts.kube.serviceAccount.ok ? facts.kube.serviceAccount.value : null
  const helmManaged = sa?.metadata.labels?.['app.kubernetes.io/managed-by'] === 'Helm'
  const missingLive = typed.manual.filter((f) => /missing on the live ServiceAccount/.test(f.message))
  if (!sa || helmManaged || missingLive.length === 0) return typed
  return {
    ...typed,
    resources: [
      serviceAccountAnnotation({
        namespace: sa.metadata.namespace ?? 'kube-system',
        name: sa.metadata.name,
        key: 'eks.amazonaws.com/sts-regional-endpoints',
        value: 'true',
        group: group(check),
        // EKS's pod identity webhook reads the annotation when a pod is created.
        restart: controllerDeployment(facts),
      }),
    ],
    manual: typed.manual.filter((f) => !missingLive.includes(f)),
  }
}

/**
 * Missing reference statements as one inline policy (the name doctor's printed command uses). Not
 * when an explicit Deny or a permissions boundary takes them away (an Allow cannot help), nor on a role
 * CloudFormation manages (the stack is where it belongs), nor past IAM's inline size limit.
 */
const controllerPolicy: Builder = (facts, failing, check) => {
  const name = facts.iam.controllerRoleName
  const role = name ? facts.iam.roles[name] : undefined
  const stack = role?.ok ? role.value?.role.tags['aws:cloudformation:stack-name'] : undefined
  const fixable = (f: Finding) => {
    const e = f.evidence as { document?: PolicyDocument; missing?: { deniedBy?: string }[] } | undefined
    return (
      !!e?.document &&
      !e.missing?.some((m) => m.deniedBy) &&
      JSON.stringify(e.document).length <= INLINE_LIMIT
    )
  }
  const auto = failing.filter(fixable)
  if (!name || !role?.ok || !role.value || stack || auto.length === 0)
    return {
      resources: [],
      manual: failing.map((f) =>
        stack
          ? { ...f, message: `${f.message} (role managed by CloudFormation stack ${stack}: add them there)` }
          : f,
      ),
    }
  const doc = (auto[0]!.evidence as { document: PolicyDocument }).document
  return {
    resources: [
      {
        ...inlinePolicy({
          address: 'iam-policy.controller-missing',
          roleName: name,
          roleArn: role.value.role.arn,
          policyName: `KarpenterControllerMissing-${facts.meta.clusterName}`,
          document: doc,
          dependsOn: [],
        }),
        group: group(check),
      },
    ],
    manual: failing.filter((f) => !auto.includes(f)),
  }
}

/** A node role without cluster access gets it the way the cluster's authentication mode allows; one
 * without the node policies gets the missing ones attached (recorded on the role). */
const nodeRole: Builder = (facts, failing, check, opts) => {
  const access = nodeAccess(facts, failing, check, opts)
  const lacking = access.manual.filter(
    (f) => /lacks /.test(f.message) && Array.isArray((f.evidence as { missing?: unknown })?.missing),
  )
  const resources = lacking.flatMap((f) => {
    const roleName = f.subject as string
    const role = facts.iam.roles[roleName]
    if (!role?.ok || !role.value) return []
    const missing = (f.evidence as { missing: string[] }).missing
    const managed = nodeRolePolicies(facts.meta.partition).filter((p) =>
      missing.some((m) => p.arn.endsWith(`/${m}`)),
    )
    if (managed.length === 0) return []
    return [
      attachedPolicies({
        address: `iam-role-policies.${roleName}`,
        roleName,
        roleArn: role.value.role.arn,
        managed,
        group: group(check),
      }),
    ]
  })
  const fixed = new Set(resources.map((r) => r.name))
  return {
    resources: [...access.resources, ...resources],
    manual: access.manual.filter((f) => !(lacking.includes(f) && fixed.has(f.subject as string))),
  }
}

/**
 * A missing queue is created as install creates it (karpctl's tags; the name the setting gives); a
 * queue whose policy does not let EventBridge send gets the reference statements beside its own; the
 * queue's ARN or URL in settings.interruptionQueue becomes its name, in the Helm repair.
 */
const queueFix: Builder = (facts, failing, check) => {
  const resources: Resource[] = []
  const values: ValueEdit[] = []
  const manual: Finding[] = []
  const r = release(facts)
  for (const f of failing) {
    const e = (f.evidence ?? {}) as {
      interruptionQueue?: string
      missing?: string[]
      source?: string
      queueName?: string | null
    }
    if (e.interruptionQueue && /does not exist/.test(f.message)) {
      const tags = ownershipTags(facts.meta.clusterName)
      const queueArn = arn(facts, 'sqs', e.interruptionQueue)
      resources.push({
        ...sqsQueue({
          name: e.interruptionQueue,
          arn: queueArn,
          attributes: { ...QUEUE_ATTRIBUTES },
          policy: queuePolicy(queueArn),
          tags,
          ownership: tags,
          adopt: false,
        }),
        group: group(check),
      })
      resources.push(...rulesForNewQueue(facts, queueArn, check))
    } else if (e.missing && f.subject?.startsWith('arn:')) {
      const q = facts.sqs.queue.ok ? facts.sqs.queue.value : null
      if (q)
        resources.push(queuePolicyStatements({ queueName: q.name, queueArn: q.arn, group: group(check) }))
      else manual.push(f)
    } else if (
      r &&
      e.queueName &&
      e.source &&
      e.source !== 'INTERRUPTION_QUEUE' &&
      !/no queue .* exists/.test(f.message)
    ) {
      values.push({ path: parseHelmPath(e.source), value: e.queueName, finding: f })
    } else manual.push(f)
  }
  return { resources, manual, values }
}

/** Missing rules are created as install names them; an existing rule is repaired in place. */
const rules: Builder = (facts, failing, check, opts) => {
  const created = missingRules(facts, failing, check, opts)
  const repairs = created.manual.filter((f) => (f.evidence as { targetId?: string } | undefined)?.targetId)
  return {
    resources: [
      ...created.resources,
      ...repairs.map((f) => {
        const e = f.evidence as { rule: string; queueArn: string; targetId: string; otherQueues?: string[] }
        return ruleRepair({
          name: e.rule,
          arn: f.subject as string,
          queueArn: e.queueArn,
          targetId: e.targetId,
          staleQueueArns: e.otherQueues ?? [],
          group: group(check),
        })
      }),
    ],
    manual: created.manual.filter((f) => !repairs.includes(f)),
  }
}

/** No association for the controller's ServiceAccount: one, to the controller role, then a restart. */
const podIdentity: Builder = (facts, failing, check) => {
  const name = facts.iam.controllerRoleName
  const role = name ? facts.iam.roles[name] : undefined
  const r = release(facts)
  const missing = failing.filter((f) => /^no Pod Identity association for /.test(f.message))
  if (!r || !role?.ok || !role.value || missing.length === 0) return { resources: [], manual: failing }
  const sa = controllerServiceAccount(facts, r)
  const tags = ownershipTags(facts.meta.clusterName)
  return {
    resources: [
      {
        ...podIdentityAssociation({
          clusterName: facts.meta.clusterName,
          clusterArn: arn(facts, 'eks', `cluster/${facts.meta.clusterName}`),
          namespace: sa.namespace,
          serviceAccount: sa.name,
          roleArn: role.value.role.arn,
          tags,
          ownership: tags,
          adopt: false,
          dependsOn: [],
          restart: controllerDeployment(facts),
        }),
        group: group(check),
      },
    ],
    manual: failing.filter((f) => !missing.includes(f)),
  }
}

/** Checks with an automatic fix; every other failing check is manual. */
const BUILDERS: Record<string, Builder> = {
  'sg-webhook-8443': sgWebhook,
  'discovery-tags': discovery,
  'passrole-node-role': passRole,
  'irsa-trust-policy': irsaTrust,
  'sts-regional-annotation': stsAnnotation,
  'toleration-value-types': valueTypes,
  'controller-policy': controllerPolicy,
  'spot-service-linked-role': spot,
  'interruption-queue': queueFix,
  'interruption-rules': rules,
  'node-role': nodeRole,
  'pod-identity': podIdentity,
}

const WHY_MANUAL: Record<string, string> = {
  'helm-release': 'a Helm release needs a decision (roll back, or upgrade with corrected values)',
  'karpenter-version': 'an upgrade of Karpenter is a planned change, not a repair',
  'toleration-value-types': 'the value is not in your Helm values (a chart default): set it in your values',
  'tenant-isolation': "a tenant's NodePool is that tenant's design",
  'controller-policy':
    'an explicit Deny, a permissions boundary or the stack that manages the role decides: change it there (below)',
}

export function fixSet(facts: Facts, results: CheckResult[], opts: FixOptions = {}): FixSet {
  const out: FixSet = { resources: [], manual: [], touched: [] }
  const edits: { check: string; edit: ValueEdit }[] = []
  for (const r of results) {
    const failing = r.findings.filter((f) => f.status === 'fail')
    if (failing.length === 0 || (opts.selected && !opts.selected(r.meta.id))) continue
    const build = BUILDERS[r.meta.id]
    const built = build ? build(facts, failing, r.meta.id, opts) : { resources: [], manual: failing }
    const fresh = built.resources.filter((x) => !out.resources.some((y) => y.address === x.address))
    if (built.resources.length || built.values?.length) out.touched.push(r.meta.id)
    out.resources.push(...fresh)
    edits.push(...(built.values ?? []).map((edit) => ({ check: r.meta.id, edit })))
    for (const f of built.manual)
      out.manual.push({
        check: r.meta.id,
        message: f.message,
        why: WHY_MANUAL[r.meta.id] ?? 'needs a human decision',
        commands: f.fix?.commands ?? [],
      })
  }
  const rel = release(facts)
  if (rel && edits.length) {
    const checks = [...new Set(edits.map((e) => e.check))]
    out.resources.push(
      helmRepair(
        rel,
        edits.map((e) => e.edit),
        opts,
        group(checks.join(', ')),
      ),
    )
    // A failed release is still a human's call, but the repair's new revision may settle it: say so,
    // and judge it again after the apply.
    for (const m of out.manual.filter((x) => x.check === 'helm-release'))
      m.why = `${m.why}; the Helm repair in this plan makes a new revision, which settles it if it deploys`
    if (out.manual.some((x) => x.check === 'helm-release')) out.touched.push('helm-release')
  }
  return out
}

export { editedValues }
