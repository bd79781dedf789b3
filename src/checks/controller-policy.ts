import type { AttachedPolicy, Facts, HelmRelease, RoleFacts } from '../facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'
import { evaluate } from '../policy/evaluate.js'
import { NEWEST_REFERENCE, referenceFor, referencePolicies } from '../desired/reference-policy.js'
import { retiredIn } from '../desired/retired-actions.js'
import {
  describeFailure,
  isLegacy,
  need,
  needRelease,
  partitionOf,
  releaseVersion,
  roleNameFromArn,
  setting,
  shellQuote,
  skip,
} from './lib/facts.js'
import { interruptionQueue, interruptionQueueArn } from './lib/interruption.js'
import { controllerKeyFindings } from './lib/queue-key.js'
import {
  editStack,
  gettingStartedUpdate,
  ownership,
  policyStacks,
  stackManagedPolicies,
} from './lib/owners.js'
import {
  actionMatch,
  asList,
  broadActionMatch,
  coversResource,
  hasCondition,
  isReadOnlyAction,
  roleStatements,
  statementLabel,
  unscopedResource,
  type SourcedStatement,
} from './lib/policy.js'
import type { Check, Finding, Fix } from './types.js'

/** One reference statement, trimmed to what the installed version and its settings use. */
interface Required {
  policy: string
  /** The reference policy's logical id in the getting-started template (NodeLifecyclePolicy, …). */
  key: string
  statement: PolicyStatement
}

/**
 * The getting-started template that describes the installed version: its own minor's (a 1.3 install is
 * not asked for what 1.12 added), the newest for a newer or unreadable version.
 */
export const referenceVersionOf = (release: HelmRelease): string => {
  const v = releaseVersion(release)
  return (v && referenceFor(v.raw)?.version) || NEWEST_REFERENCE
}

function requiredStatements(
  facts: Facts,
  release: HelmRelease,
  accountId: string,
  referenceVersion = referenceVersionOf(release),
): Required[] {
  // The queue meant, derived as interruption-queue derives it: a URL or ARN in the setting is that
  // check's failure, not a reason to demand SQS actions on an ARN made of an ARN. No queue (or a
  // setting that names none): interruption handling is off, the SQS actions are not needed.
  const ref = interruptionQueue(facts, release)
  const queueArn = ref
    ? interruptionQueueArn(facts, ref)?.replace(':<account-id>:', `:${accountId}:`)
    : undefined
  const zonalShift = String(setting(release, 'enableZonalShift')) === 'true'
  // Karpenter resolves a placement group only for an EC2NodeClass that selects one (v1.14.1
  // pkg/providers/placementgroup/provider.go: Get returns nothing without a selector). Unread: asked.
  const classes = facts.kube.nodeClasses
  const placementGroups =
    !classes.ok || classes.value.some((nc) => nc.spec.placementGroupSelector !== undefined)
  const version = releaseVersion(release)?.raw
  const docs = referencePolicies(referenceVersion, {
    partition: partitionOf(facts),
    region: facts.meta.region,
    accountId,
    clusterName: facts.meta.clusterName,
    nodeRoleArns: [],
    queueArn: queueArn ?? `arn:${partitionOf(facts)}:sqs:${facts.meta.region}:${accountId}:`,
  })
  const out: Required[] = []
  for (const doc of docs) {
    for (const s of doc.document.Statement) {
      const actions = asList(s.Action).filter((a) => {
        const key = a.toLowerCase()
        if (key === 'iam:passrole') return false // passrole-node-role proves it per node role
        if (key.startsWith('sqs:') && !queueArn) return false // no queue: interruption is off
        if (retiredIn(key, version)) return false // the template lags: this version never calls it
        if (key === 'ec2:describeplacementgroups' && !placementGroups) return false
        return !(key.startsWith('arc-zonal-shift:') && !zonalShift) // opt-in
      })
      const resources = asList(s.Resource)
      if (actions.length === 0 || resources.length === 0) continue
      out.push({ policy: doc.name, key: doc.key, statement: { ...s, Action: actions, Resource: resources } })
    }
  }
  return out
}

interface Gap {
  action: string
  required: Required
  deniedBy?: string
}

interface Narrow {
  action: string
  sid?: string
  uncovered: string[]
}

interface Broad {
  label: string
  actions: Set<string>
  reasons: Set<string>
  reference: Set<PolicyStatement>
  details: { action: string; referenceSid?: string; detail: string }[]
}

interface Coverage {
  missing: Gap[]
  narrow: Narrow[]
  broad: Map<string, Broad>
}

function coverage(required: Required[], statements: SourcedStatement[], accountId: string): Coverage {
  const result: Coverage = { missing: [], narrow: [], broad: new Map() }
  for (const req of required) {
    const refResources = asList(req.statement.Resource)
    for (const action of asList(req.statement.Action)) {
      const deny = statements.find(
        (s) =>
          s.statement.Effect === 'Deny' &&
          !hasCondition(s.statement) &&
          actionMatch(s.statement, action) &&
          refResources.every((r) => coversResource(s.statement, r, accountId)),
      )
      const grants = statements.filter(
        (s) =>
          s.statement.Effect === 'Allow' &&
          actionMatch(s.statement, action) &&
          refResources.some((r) => coversResource(s.statement, r, accountId)),
      )
      if (deny || grants.length === 0) {
        result.missing.push({ action, required: req, ...(deny ? { deniedBy: statementLabel(deny) } : {}) })
        continue
      }
      const uncovered = refResources.filter(
        (r) => !grants.some((g) => coversResource(g.statement, r, accountId)),
      )
      if (uncovered.length > 0) result.narrow.push({ action, sid: req.statement.Sid, uncovered })
      if (!isReadOnlyAction(action))
        for (const g of grants) noteBreadth(result.broad, g, action, req.statement)
    }
  }
  return result
}

/**
 * A grant scoped as the installed version's template or as the newest one is scoped right (the newest is
 * what AWS's guide installs today, on any 1.x): a narrow or broad grant is reported only when it is so
 * against both. What is missing is judged against the installed version alone.
 */
function scopedAsEither(
  installed: Coverage,
  newest: { required: Required[]; coverage: Coverage } | null,
): Coverage {
  if (!newest) return installed
  const narrowThere = new Set(newest.coverage.narrow.map((n) => n.action))
  const neededThere = new Set(newest.required.flatMap((r) => asList(r.statement.Action)))
  return {
    missing: installed.missing,
    narrow: installed.narrow.filter((n) => narrowThere.has(n.action) || !neededThere.has(n.action)),
    broad: new Map([...installed.broad].filter(([label]) => newest.coverage.broad.has(label))),
  }
}

/** Records why a grant of a mutating action is wider than the reference statement it stands in for. */
function noteBreadth(broad: Map<string, Broad>, g: SourcedStatement, action: string, ref: PolicyStatement) {
  const reasons: [short: string, detail: string][] = []
  const match = actionMatch(g.statement, action) as string
  if (broadActionMatch(match, action)) reasons.push([`action pattern ${match}`, `matched by ${match}`])
  if (!hasCondition(g.statement) && hasCondition(ref)) {
    const keys = [...new Set(Object.values(ref.Condition ?? {}).flatMap((kv) => Object.keys(kv)))]
    reasons.push(['no Condition where the reference scopes by tags', `reference requires ${keys.join(', ')}`])
  } else if (
    !hasCondition(g.statement) &&
    unscopedResource(g.statement) &&
    !asList(ref.Resource).includes('*')
  ) {
    reasons.push([
      'Resource "*" where the reference names ARNs',
      `reference scopes to ${asList(ref.Resource).join(', ')}`,
    ])
  }
  if (reasons.length === 0) return
  const label = statementLabel(g)
  const entry = broad.get(label) ?? {
    label,
    actions: new Set(),
    reasons: new Set(),
    reference: new Set(),
    details: [],
  }
  entry.actions.add(action)
  entry.reference.add(ref)
  for (const [short, detail] of reasons) {
    entry.reasons.add(short)
    entry.details.push({ action, referenceSid: ref.Sid, detail })
  }
  broad.set(label, entry)
}

export const controllerPolicy: Check = {
  meta: {
    id: 'controller-policy',
    title: 'The controller role carries the permissions of the reference policy',
    category: 'iam',
    severity: 'error',
    docs: 'Compares the controller role\'s attached and inline policies with the getting-started CloudFormation policies for the installed Karpenter version: every action must be granted on the resources the reference names; grants much wider than the reference (wildcard actions, Resource "*", dropped tag conditions) are reported as security warnings. With an SSE-KMS interruption queue, the role must be allowed kms:Decrypt on its key (by the key policy, or by IAM where the key policy defers to the account). iam:PassRole is proven by passrole-node-role.',
  },
  run(facts) {
    const release = needRelease(facts)
    if (isLegacy(release)) {
      skip(
        `Karpenter ${release.chartVersion} (v0.x) uses a different controller policy: upgrade to v1 first (see karpenter-version)`,
      )
    }
    const roleName = facts.iam.controllerRoleName
    if (!roleName) {
      // Without IRSA the role is the Pod Identity association's: unread, the role is unknown, not absent.
      need(facts.eks.podIdentityAssociations)
      skip(
        'the controller role was not discovered (no IRSA annotation or Pod Identity association): see irsa-trust-policy and pod-identity',
      )
    }
    const read = facts.iam.roles[roleName]
    if (!read)
      return [
        { status: 'unknown', subject: roleName, message: `controller role ${roleName} was not collected` },
      ]
    const role = need(read)
    if (!role) {
      return [
        {
          status: 'fail',
          subject: roleName,
          message: `controller role ${roleName} does not exist: every AWS call of the controller fails`,
          fix: {
            summary:
              'create the role (karpctl install), or point the controller identity at the existing role',
          },
        },
      ]
    }
    const attached = need(role.attached)
    const inline = need(role.inline)
    const accountId = facts.meta.accountId ?? role.role.arn.split(':')[4] ?? '*'
    const required = requiredStatements(facts, release, accountId)
    const statements = roleStatements(attached, inline)
    const newest =
      referenceVersionOf(release) === NEWEST_REFERENCE
        ? null
        : requiredStatements(facts, release, accountId, NEWEST_REFERENCE)
    const result = scopedAsEither(
      coverage(required, statements, accountId),
      newest && { required: newest, coverage: coverage(newest, statements, accountId) },
    )

    const unreadable = attached.filter((p) => p.document === null)
    const version = releaseVersion(release)?.raw ?? release.chartVersion
    const subject = role.role.arn
    const findings: Finding[] = []

    // The permissions boundary caps what the policies grant: each action must be allowed by both.
    const boundaryArn = role.role.permissionsBoundaryArn
    const boundary = boundaryArn
      ? boundaryFinding(facts, roleName, role.boundary, boundaryArn, required, accountId, version)
      : null
    if (result.missing.length > 0) {
      findings.push(missingFinding(facts, role, version, result.missing, unreadable))
    } else {
      const count = new Set(required.flatMap((r) => asList(r.statement.Action))).size
      const capped =
        boundaryArn && boundary === null
          ? `, and its permissions boundary ${roleNameFromArn(boundaryArn)} allows them`
          : ''
      findings.push({
        status: 'pass',
        subject,
        message: `${roleName} grants all ${count} actions Karpenter ${version} needs${capped} (compared with the reference policy: SCPs and session policies not seen; iam:PassRole: see passrole-node-role)`,
        caveats: [POLICY_CAVEAT],
      })
      for (const p of unreadable) findings.push(unreadableFinding(p))
    }
    if (boundary) findings.push(boundary)
    if (result.narrow.length > 0) findings.push(narrowFinding(roleName, subject, result.narrow))
    for (const b of result.broad.values()) findings.push(broadFinding(roleName, b))
    // An SSE-KMS interruption queue: receiving also needs kms:Decrypt on its key, which the key policy decides.
    if (required.some((r) => asList(r.statement.Action).some((a) => a.startsWith('sqs:'))))
      findings.push(...controllerKeyFindings(facts, role))
    return findings
  },
}

function missingFinding(
  facts: Facts,
  role: RoleFacts,
  version: string,
  missing: Gap[],
  unreadable: AttachedPolicy[],
): Finding {
  const roleName = role.role.name
  const subject = role.role.arn
  const actions = [...new Set(missing.map((g) => g.action))]
  const evidence = {
    /** The reference statements that hold the missing actions, trimmed to them (what --fix adds). */
    document: missingDocument(missing),
    missing: missing.map((g) => ({
      action: g.action,
      referenceSid: g.required.statement.Sid,
      referencePolicy: g.required.policy,
      ...(g.deniedBy ? { deniedBy: g.deniedBy } : {}),
    })),
  }
  if (unreadable.length > 0) {
    return {
      status: 'unknown',
      subject,
      message: `${actions.length} action(s) Karpenter ${version} needs are not in the readable policies of ${roleName} (${actions.join(', ')}), and ${unreadable.length} attached policy(ies) could not be read: ${unreadable.map((p) => `${p.name} (${p.documentError ? describeFailure(p.documentError) : 'no document'})`).join('; ')}`,
      evidence: { ...evidence, unreadable: unreadable.map((p) => p.arn) },
    }
  }
  const denied = missing.filter((g) => g.deniedBy)
  const repair = stackRepair(facts, role, version, missing)
  return {
    status: 'fail',
    subject,
    message: `controller role ${roleName} lacks ${actions.length} action(s) Karpenter ${version} needs: ${actions.join(', ')}${denied.length > 0 ? ` (explicitly denied: ${[...new Set(denied.map((g) => g.deniedBy))].join(', ')})` : ''}`,
    evidence: { ...evidence, ...repair.evidence },
    fix: repair.fix,
  }
}

/** What a controller role lacks of one version's reference template (upgrade adds it before the chart). */
export interface ReferenceGaps {
  /** The reference statements that hold the missing actions, trimmed to them and scoped as there. */
  document: PolicyDocument
  actions: string[]
  /** Statements of the role's own that explicitly deny a needed action: an Allow beside them cannot help. */
  deniedBy: string[]
  /** Attached policies whose document could not be read: what they grant is not known. */
  unreadable: string[]
}

/**
 * The coverage this check judges with, against the template of `version` rather than the installed
 * one's: null when the role's policies could not be read.
 */
export function referenceGaps(facts: Facts, version: string): ReferenceGaps | null {
  const release = facts.kube.release.ok ? facts.kube.release.value : null
  const name = facts.iam.controllerRoleName
  const read = name ? facts.iam.roles[name] : undefined
  const role = read?.ok ? read.value : null
  if (!release || !role || !role.attached.ok || !role.inline.ok) return null
  const accountId = facts.meta.accountId ?? role.role.arn.split(':')[4] ?? '*'
  const required = requiredStatements(facts, release, accountId, version)
  const missing = coverage(
    required,
    roleStatements(role.attached.value, role.inline.value),
    accountId,
  ).missing
  return {
    document: missingDocument(missing),
    actions: [...new Set(missing.map((g) => g.action))],
    deniedBy: [...new Set(missing.flatMap((g) => (g.deniedBy ? [g.deniedBy] : [])))],
    unreadable: role.attached.value.filter((p) => p.document === null).map((p) => p.arn),
  }
}

/** The reference statements that hold the missing actions, trimmed to those actions. */
function missingStatements(missing: Gap[]): Map<string, PolicyStatement[]> {
  const byPolicy = new Map<string, PolicyStatement[]>()
  const seen = new Map<PolicyStatement, PolicyStatement>()
  for (const g of missing) {
    const ref = g.required.statement
    let trimmed = seen.get(ref)
    if (!trimmed) {
      trimmed = { ...ref, Action: [] }
      seen.set(ref, trimmed)
      byPolicy.set(g.required.policy, [...(byPolicy.get(g.required.policy) ?? []), trimmed])
    }
    ;(trimmed.Action as string[]).push(g.action)
  }
  return byPolicy
}

// A role's inline policies share a 10,240-character budget; managed policies get 6,144 each.
export const INLINE_LIMIT = 10240

const missingDocument = (missing: Gap[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [...missingStatements(missing).values()].flat(),
})

/**
 * The fix of missing actions where CloudFormation is involved, with what it found as evidence: the
 * stack's own managed policies re-attached when they were detached (the stack declares them: not
 * drift), the getting-started stack updated to the installed version's template when its attached
 * policies are older than the controller, the role's stack edited when the role is a stack's. Else
 * the inline policy of missingFix.
 */
function stackRepair(
  facts: Facts,
  role: RoleFacts,
  version: string,
  missing: Gap[],
): { fix: Fix; evidence?: Record<string, unknown> } {
  const roleName = role.role.name
  const attached = new Set(role.attached.ok ? role.attached.value.map((p) => p.arn) : [])
  const owner = ownership(facts, roleName, role.role.tags)
  const roleStack = owner.kind === 'stack' ? owner.owner.stackName : undefined
  const reattach = new Set<string>()
  const update = new Set<string>()
  const left: Gap[] = []
  for (const g of missing) {
    const declared = policyStacks(facts).flatMap((stack) => {
      const arn = stackManagedPolicies(facts, stack).get(g.required.key)
      return arn ? [{ stack, arn }] : []
    })
    const detached = declared.find((d) => !attached.has(d.arn))
    if (detached && !g.deniedBy) reattach.add(detached.arn)
    else if (declared[0] && !g.deniedBy) update.add(declared[0].stack)
    else left.push(g)
  }
  if (!roleStack && reattach.size === 0 && update.size === 0)
    return { fix: missingFix(facts, roleName, missing) }
  const commands = [...reattach].map(
    (arn) => `aws iam attach-role-policy --role-name ${roleName} --policy-arn ${arn}`,
  )
  const steps: string[] = []
  if (reattach.size > 0)
    steps.push(
      `re-attach the stack's own managed policies ${[...reattach].map(roleNameFromArn).join(', ')} (detached from ${roleName}; the stack declares them, so this is not drift)`,
    )
  for (const stack of update) {
    commands.push(...gettingStartedUpdate(stack, version))
    steps.push(
      `update stack ${stack} to the getting-started template of Karpenter ${version} (its policies predate the controller)`,
    )
  }
  let snippet: Fix['snippet']
  if (left.length > 0) {
    if (roleStack) {
      commands.push(...editStack(roleStack))
      steps.push(
        `add the statements below to the policies of ${roleName} in the template of stack ${roleStack} (pass each of its parameters with UsePreviousValue=true), then update the stack${left.some((g) => g.deniedBy) ? '; remove the Deny there too' : ''}`,
      )
      snippet = { language: 'json', text: JSON.stringify(missingDocument(left), null, 2) }
    } else {
      const rest = missingFix(facts, roleName, left)
      commands.push(...(rest.commands ?? []))
      steps.push(rest.summary)
      snippet = rest.snippet
    }
  }
  return {
    fix: { summary: steps.join('; then '), commands, ...(snippet ? { snippet } : {}) },
    evidence: {
      ...(roleStack ? { roleStack } : {}),
      ...(reattach.size > 0 ? { reattach: [...reattach] } : {}),
      ...(update.size > 0 ? { updateStacks: [...update] } : {}),
    },
  }
}

function missingFix(facts: Facts, roleName: string, missing: Gap[]): Fix {
  const byPolicy = missingStatements(missing)
  const all = missingDocument(missing)
  const json = JSON.stringify(all)
  const names = [...byPolicy.keys()].join(', ')
  if (json.length <= INLINE_LIMIT) {
    return {
      summary: `add the missing statements of the reference (${names}) as an inline policy; denied actions also need the Deny removed`,
      commands: [
        `aws iam put-role-policy --role-name ${roleName} --policy-name KarpenterControllerMissing-${facts.meta.clusterName} --policy-document ${shellQuote(json)}`,
      ],
      snippet: { language: 'json', text: JSON.stringify(all, null, 2) },
    }
  }
  const partition = partitionOf(facts)
  return {
    summary: `create the reference managed policies (${names}) and attach them (if one exists, add a version with aws iam create-policy-version --set-as-default)`,
    commands: [...byPolicy].flatMap(([name, statements]) => [
      `aws iam create-policy --policy-name ${name} --policy-document ${shellQuote(JSON.stringify({ Version: '2012-10-17', Statement: statements }))}`,
      `aws iam attach-role-policy --role-name ${roleName} --policy-arn arn:${partition}:iam::${facts.meta.accountId ?? '<account-id>'}:policy/${name}`,
    ]),
  }
}

/** What comparing policy documents cannot see: said with a pass. */
const POLICY_CAVEAT =
  "controller-policy compares the role's policy documents (and its permissions boundary) with the reference: service control policies (SCPs) and session policies are not seen, and an SCP can still deny what they grant"

/**
 * The actions the permissions boundary does not allow (a fail, with a new boundary version adding
 * the reference statements), or unknown when the boundary could not be read; null when it allows all.
 */
function boundaryFinding(
  facts: Facts,
  roleName: string,
  boundary: AttachedPolicy | undefined,
  arn: string,
  required: Required[],
  accountId: string,
  version: string,
): Finding | null {
  const name = roleNameFromArn(arn)
  if (!boundary?.document) {
    return {
      status: 'unknown',
      subject: arn,
      message: `permissions boundary ${name} of ${roleName} could not be read, so whether it allows what the role's policies grant is not known: ${boundary?.documentError ? describeFailure(boundary.documentError) : 'not collected'}`,
      evidence: { permissionsBoundary: arn },
    }
  }
  const gaps = coverage(required, roleStatements([boundary], []), accountId).missing
  if (gaps.length === 0) return null
  const actions = [...new Set(gaps.map((g) => g.action))]
  const denied = [...new Set(gaps.flatMap((g) => (g.deniedBy ? [g.deniedBy] : [])))]
  const repair = boundaryRepair(facts)
  return {
    status: 'fail',
    subject: arn,
    message: `permissions boundary ${name} of ${roleName} does not allow ${actions.length} action(s) Karpenter ${version} needs, so the role's grants of them are void: ${actions.join(', ')}${denied.length > 0 ? ` (explicitly denied: ${denied.join(', ')})` : ''}`,
    evidence: {
      permissionsBoundary: arn,
      missing: gaps.map((g) => ({
        action: g.action,
        referenceSid: g.required.statement.Sid,
        ...(g.deniedBy ? { deniedBy: g.deniedBy } : {}),
      })),
    },
    ...(repair ? { fix: repair.fix } : {}),
  }
}

export interface BoundaryRepair {
  arn: string
  /** The boundary's statements, then those it lacks. */
  document: PolicyDocument
  added: PolicyStatement[]
  fix: Fix
}

/**
 * One new version of the controller role's permissions boundary that allows every action the
 * reference needs (controller-policy) and passing every node role (passrole-node-role). Both checks
 * print this same command: applying either, or both in any order, ends with the same boundary.
 * Null when the boundary is unknown or lacks nothing.
 */
export function boundaryRepair(facts: Facts): BoundaryRepair | null {
  const roleName = facts.iam.controllerRoleName
  const read = roleName ? facts.iam.roles[roleName] : undefined
  const role = read?.ok ? read.value : null
  const arn = role?.role.permissionsBoundaryArn
  const boundary = role?.boundary
  if (!role || !arn || !boundary?.document) return null
  const doc = boundary.document
  const accountId = facts.meta.accountId ?? role.role.arn.split(':')[4] ?? '*'
  const release = facts.kube.release.ok ? facts.kube.release.value : null
  const required = release && !isLegacy(release) ? requiredStatements(facts, release, accountId) : []
  const gaps = coverage(required, roleStatements([boundary], []), accountId).missing
  const added = [...missingStatements(gaps).values()].flat()
  const context = { 'iam:PassedToService': 'ec2.amazonaws.com' }
  const passing = Object.keys(facts.iam.passRole)
    .sort()
    .map((resource) => ({ resource, ...evaluate([doc], { action: 'iam:PassRole', resource, context }) }))
  const notPassable = passing.filter((p) => p.decision !== 'allowed').map((p) => p.resource)
  if (notPassable.length > 0) {
    added.push({
      Sid: 'AllowPassingKarpenterNodeRoles',
      Effect: 'Allow',
      Action: 'iam:PassRole',
      Resource: notPassable.length === 1 ? (notPassable[0] as string) : notPassable,
    })
  }
  if (added.length === 0) return null
  const denied = [
    ...new Set([
      ...gaps.flatMap((g) => (g.deniedBy ? [g.deniedBy] : [])),
      ...passing.filter((p) => p.decision === 'explicitDeny').flatMap((p) => p.matchedStatements),
    ]),
  ]
  const name = roleNameFromArn(arn)
  const document: PolicyDocument = {
    ...doc,
    Version: doc.Version ?? '2012-10-17',
    Statement: [...doc.Statement, ...added],
  }
  return {
    arn,
    document,
    added,
    fix: {
      summary: `let the permissions boundary ${name} of ${role.role.name} allow what Karpenter needs (${[...new Set(added.flatMap((s) => asList(s.Action)))].join(', ')}): a new default version that keeps its statements and adds the missing ones${denied.length > 0 ? `; remove or narrow ${denied.join(', ')} first (an Allow cannot override a Deny)` : ''}. IAM keeps 5 versions (delete the oldest first if it has 5); the boundary may be your security team's`,
      commands: [
        `aws iam create-policy-version --policy-arn ${arn} --set-as-default --policy-document ${shellQuote(JSON.stringify(document))}`,
      ],
      snippet: { language: 'json', text: JSON.stringify({ Statement: added }, null, 2) },
    },
  }
}

function unreadableFinding(p: AttachedPolicy): Finding {
  return {
    status: 'unknown',
    subject: p.arn,
    message: `attached policy ${p.name} could not be read, so its statements (allows or denies) were not checked: ${p.documentError ? describeFailure(p.documentError) : 'no document'}`,
    evidence: { policy: p.arn },
  }
}

function narrowFinding(roleName: string, subject: string, narrow: Narrow[]): Finding {
  return {
    status: 'warn',
    subject,
    message: `${roleName} grants ${[...new Set(narrow.map((n) => n.action))].join(', ')} on fewer resources than the reference: calls on the others are denied`,
    evidence: {
      narrower: narrow.map((n) => ({ action: n.action, referenceSid: n.sid, notCovered: n.uncovered })),
    },
    fix: {
      summary: 'widen the grants to the reference resources (or confirm the narrower scope is intended)',
    },
  }
}

function broadFinding(roleName: string, b: Broad): Finding {
  return {
    status: 'warn',
    subject: b.label,
    message: `security: ${b.label} on ${roleName} grants ${[...b.actions].join(', ')} more broadly than the reference (${[...b.reasons].join('; ')})`,
    evidence: { statement: b.label, actions: [...b.actions], details: b.details },
    fix: {
      summary: 'scope the statement as the reference does (resources and tag conditions below)',
      snippet: {
        language: 'json',
        text: JSON.stringify({ Version: '2012-10-17', Statement: [...b.reference] }, null, 2),
      },
    },
  }
}
