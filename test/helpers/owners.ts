// Hand-built CloudFormation ownership for the healthy `demo` facts (test/helpers/facts.ts): the
// getting-started stack `Karpenter-demo` (node role, the six controller managed policies, the queue,
// the five rules) and eksctl's stack for the controller role, as the collector records what
// DescribeStackResources answered.
import type { Facts, ReadFailure, StackOwner, StackResourceSummary } from '../../src/facts/types.js'
import { ACCOUNT, CONTROLLER_ROLE, NODE_ROLE, REGION } from './facts.js'

export const GS_STACK = 'Karpenter-demo'
export const EKSCTL_STACK = 'eksctl-demo-podidentityrole-kube-system-karpenter'
export const QUEUE_URL = `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/demo`
export const policyArn = (name: string) => `arn:aws:iam::${ACCOUNT}:policy/${name}`
/** The controller policies of the template: logical id → the name the healthy fixture attaches. */
export const STACK_POLICIES: Record<string, string> = {
  NodeLifecyclePolicy: 'KarpenterControllerNodeLifecyclePolicy-demo',
  IAMIntegrationPolicy: 'KarpenterControllerIAMIntegrationPolicy-demo',
  EKSIntegrationPolicy: 'KarpenterControllerEKSIntegrationPolicy-demo',
  InterruptionPolicy: 'KarpenterControllerInterruptionPolicy-demo',
  ZonalShiftPolicy: 'KarpenterControllerZonalShiftPolicy-demo',
  ResourceDiscoveryPolicy: 'KarpenterControllerResourceDiscoveryPolicy-demo',
}

const stackId = (name: string) => `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${name}/0f1e2d3c`

function cfn(f: Facts): NonNullable<Facts['cloudformation']> {
  f.cloudformation ??= { owners: {}, stacks: {} }
  return f.cloudformation
}

/** Records that stack `stack` declares `physicalId` (and lists it among the stack's resources). */
export function ownedBy(
  f: Facts,
  physicalId: string,
  stack: string,
  logicalId: string,
  resourceType: string,
) {
  const owner: StackOwner = {
    stackName: stack,
    stackId: stackId(stack),
    logicalId,
    resourceType,
    resourceStatus: 'CREATE_COMPLETE',
  }
  const c = cfn(f)
  c.owners[physicalId] = { ok: true, value: owner }
  const resources: StackResourceSummary[] = (c.stacks[stack] ??= [])
  if (!resources.some((r) => r.physicalId === physicalId))
    resources.push({ logicalId, physicalId, resourceType, resourceStatus: 'CREATE_COMPLETE' })
}

/** No stack declares `physicalId` (CloudFormation answered "Stack for … does not exist"). */
export const notOwned = (f: Facts, physicalId: string) => {
  cfn(f).owners[physicalId] = { ok: true, value: null }
}

/** CloudFormation could not be asked about `physicalId`. */
export const ownerUnknown = (f: Facts, physicalId: string, kind: ReadFailure['kind'] = 'denied') => {
  cfn(f).owners[physicalId] = {
    ok: false,
    error: {
      code: kind === 'denied' ? 'AccessDenied' : 'NotImplemented',
      kind,
      message:
        'User: arn:aws:iam::123456789012:user/ci is not authorized to perform: cloudformation:DescribeStackResources',
      read: `cloudformation:DescribeStackResources ${physicalId}`,
    },
  }
}

/** The getting-started stack (its rules named after the healthy fixture's) and eksctl's controller role. */
export function gettingStarted(f: Facts) {
  ownedBy(f, CONTROLLER_ROLE, EKSCTL_STACK, 'Role1', 'AWS::IAM::Role')
  ownedBy(f, NODE_ROLE, GS_STACK, 'KarpenterNodeRole', 'AWS::IAM::Role')
  for (const [logicalId, name] of Object.entries(STACK_POLICIES))
    ownedBy(f, policyArn(name), GS_STACK, logicalId, 'AWS::IAM::ManagedPolicy')
  ownedBy(f, QUEUE_URL, GS_STACK, 'KarpenterInterruptionQueue', 'AWS::SQS::Queue')
  const rules = f.events.rules.ok ? f.events.rules.value : []
  for (const r of rules)
    ownedBy(f, r.name, GS_STACK, r.name.replace(/^Karpenter-demo-/, ''), 'AWS::Events::Rule')
}
