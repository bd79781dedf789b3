// Whose resource is it: the CloudFormation stack that declares it (facts.cloudformation, asked of
// CloudFormation by physical id), else the `aws:cloudformation:*` tags where a service carries them
// (SQS), else nobody. A stack's resource is changed in the stack: a direct change is drift the next
// stack update reverts (or fails on). Shared by the checks' printed fixes and doctor --fix.
import type { Facts, ReadFailure, StackOwner, Tags } from '../../facts/types.js'
import type { Fix } from '../types.js'
import { describeFailure } from './facts.js'

export type Ownership =
  /** A stack declares it. */
  | { kind: 'stack'; owner: StackOwner }
  /** No stack does (or the snapshot predates the question and no tag says otherwise). */
  | { kind: 'none' }
  /** CloudFormation could not be asked: not "not owned". */
  | { kind: 'unknown'; error: ReadFailure }

/** The owner of the resource with this physical id (a role's name, a policy's ARN, a queue's URL, a rule's name). */
export function ownership(facts: Facts, physicalId: string, tags: Tags = {}): Ownership {
  const read = facts.cloudformation?.owners[physicalId]
  if (read?.ok && read.value) return { kind: 'stack', owner: read.value }
  const stackName = tags['aws:cloudformation:stack-name']
  if (stackName)
    return {
      kind: 'stack',
      owner: {
        stackName,
        stackId: tags['aws:cloudformation:stack-id'] ?? '',
        logicalId: tags['aws:cloudformation:logical-id'] ?? '',
        resourceType: '',
        resourceStatus: '',
      },
    }
  if (read && !read.ok) return { kind: 'unknown', error: read.error }
  return { kind: 'none' }
}

/**
 * Why doctor --fix must not change the resource itself, or null when it may: a stack owns it, or
 * CloudFormation could not be asked. An endpoint that cannot answer the question at all (an emulator:
 * `unsupported`) holds no stack to ask, so it does not block; a denied or failed read does.
 */
export function fixBlocked(o: Ownership, what: string): string | null {
  if (o.kind === 'stack')
    return `${what} belongs to CloudFormation stack ${o.owner.stackName}: change it in the stack, a direct change is drift the stack reverts`
  if (o.kind === 'unknown' && o.error.kind !== 'unsupported')
    return `whether a CloudFormation stack owns ${what} is not known (${describeFailure(o.error)}): allow cloudformation:DescribeStackResources and run again, or apply the command yourself if no stack owns it`
  return null
}

/** The stack's managed policies (its AWS::IAM::ManagedPolicy resources), by logical id → ARN. */
export function stackManagedPolicies(facts: Facts, stackName: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const r of facts.cloudformation?.stacks[stackName] ?? [])
    if (r.resourceType === 'AWS::IAM::ManagedPolicy' && r.physicalId) out.set(r.logicalId, r.physicalId)
  return out
}

/** The stacks of the facts that declare managed policies, by name (the getting-started stack does). */
export function policyStacks(facts: Facts): string[] {
  return Object.keys(facts.cloudformation?.stacks ?? {}).filter(
    (s) => stackManagedPolicies(facts, s).size > 0,
  )
}

/**
 * The getting-started template of a Karpenter version (the one `cloudformation.yaml` of its guide),
 * and the update of a stack made from it: what adds the statements a newer controller needs.
 */
export function gettingStartedUpdate(stackName: string, version: string): string[] {
  const file = `karpenter-${version}-cloudformation.yaml`
  return [
    `curl -fsSL https://raw.githubusercontent.com/aws/karpenter-provider-aws/v${version}/website/content/en/preview/getting-started/getting-started-with-karpenter/cloudformation.yaml -o ${file}`,
    `aws cloudformation update-stack --stack-name ${stackName} --template-body file://${file} --parameters ParameterKey=ClusterName,UsePreviousValue=true --capabilities CAPABILITY_NAMED_IAM`,
  ]
}

/** A stack whose template is not Karpenter's: edit its template, then update it. */
export function editStack(stackName: string): string[] {
  return [
    `aws cloudformation get-template --stack-name ${stackName} --query TemplateBody --output json > ${stackName}.template.json`,
    `aws cloudformation update-stack --stack-name ${stackName} --template-body file://${stackName}.template.json --parameters <each parameter as ParameterKey=NAME,UsePreviousValue=true> --capabilities CAPABILITY_NAMED_IAM`,
  ]
}

/**
 * A check's fix for a resource a stack owns: the same change, made in the stack's template, with the
 * commands that show the stack's drift and update it. Unchanged when no stack owns the resource.
 */
export function inStack(fix: Fix, o: Ownership, what: string): Fix {
  if (o.kind !== 'stack') return fix
  const s = o.owner.stackName
  const logical = o.owner.logicalId ? ` (${o.owner.logicalId})` : ''
  return {
    summary: `${what} belongs to CloudFormation stack ${s}${logical}: ${fix.summary} in the stack's template and update the stack, not directly (a direct change is drift the stack reverts); if drift detection shows ${what} drifted from the template, restore what the template declares instead`,
    commands: [
      `aws cloudformation detect-stack-drift --stack-name ${s}`,
      `aws cloudformation describe-stack-resource-drifts --stack-name ${s} --stack-resource-drift-status-filters MODIFIED DELETED`,
      ...editStack(s),
    ],
    ...(fix.snippet ? { snippet: fix.snippet } : {}),
  }
}
