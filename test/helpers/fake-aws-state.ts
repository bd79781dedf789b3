// A small in-memory account (IAM roles, SQS queues, EventBridge rules) that answers the reads the plan
// resources make and applies their writes, so a test can run adopt → teardown and compare the account
// with what it was before. Only the operations the resources use; anything else throws.
import type { ApplyEnv } from '../../src/plan/types.js'
import { onePage } from './pager.js'

export interface FakeRole {
  trust: unknown
  tags: Record<string, string>
  attached: string[]
  inline: Record<string, unknown>
}
export interface FakeQueue {
  arn: string
  attributes: Record<string, string>
  tags: Record<string, string>
}
export interface FakeRule {
  arn: string
  state: string
  pattern: unknown
  targets: { Id: string; Arn: string }[]
  tags: Record<string, string>
}
export interface FakeAccount {
  roles: Record<string, FakeRole>
  queues: Record<string, FakeQueue>
  rules: Record<string, FakeRule>
}

const notFound = (what: string) => Object.assign(new Error(`${what} not found`), { name: 'NoSuchEntity' })
const tagList = (t: Record<string, string>) => Object.entries(t).map(([Key, Value]) => ({ Key, Value }))
const fromList = (l: { Key: string; Value: string }[]) => Object.fromEntries(l.map((t) => [t.Key, t.Value]))
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T

export function fakeAccount(initial: FakeAccount) {
  const state = clone(initial)
  const writes: [string, Record<string, unknown>][] = []
  const role = (name: unknown) => state.roles[name as string] ?? raise(notFound(`role ${String(name)}`))
  const queueByUrl = (url: unknown) => {
    const name = String(url).split('/').pop() as string
    return state.queues[name] ?? raise(Object.assign(new Error('no queue'), { name: 'QueueDoesNotExist' }))
  }
  const rule = (name: unknown) =>
    state.rules[name as string] ??
    raise(Object.assign(new Error('no rule'), { name: 'ResourceNotFoundException' }))
  const ruleByArn = (arn: unknown) =>
    Object.values(state.rules).find((r) => r.arn === arn) ?? raise(notFound(String(arn)))

  const reads: Record<string, (i: Record<string, unknown>) => unknown> = {
    GetRole: (i) => {
      const r = role(i.RoleName)
      return {
        Role: {
          RoleName: i.RoleName,
          Arn: `arn:aws:iam::123456789012:role/${String(i.RoleName)}`,
          Path: '/',
          AssumeRolePolicyDocument: encodeURIComponent(JSON.stringify(r.trust)),
          Tags: tagList(r.tags),
        },
      }
    },
    ListAttachedRolePolicies: (i) => ({
      AttachedPolicies: role(i.RoleName).attached.map((PolicyArn) => ({
        PolicyArn,
        PolicyName: PolicyArn.split('/').pop(),
      })),
    }),
    ListRolePolicies: (i) => ({ PolicyNames: Object.keys(role(i.RoleName).inline) }),
    GetRolePolicy: (i) => {
      const d = role(i.RoleName).inline[i.PolicyName as string]
      if (!d) throw notFound(`policy ${String(i.PolicyName)}`)
      return { PolicyDocument: encodeURIComponent(JSON.stringify(d)) }
    },
    ListInstanceProfilesForRole: () => ({ InstanceProfiles: [] }),
    GetQueueUrl: (i) => {
      if (!state.queues[i.QueueName as string])
        throw Object.assign(new Error('no queue'), { name: 'QueueDoesNotExist' })
      return { QueueUrl: `https://sqs.us-west-2.amazonaws.com/123456789012/${String(i.QueueName)}` }
    },
    GetQueueAttributes: (i) => {
      const q = queueByUrl(i.QueueUrl)
      return { Attributes: { ...q.attributes, QueueArn: q.arn } }
    },
    ListQueueTags: (i) => ({ Tags: { ...queueByUrl(i.QueueUrl).tags } }),
    DescribeRule: (i) => {
      const r = rule(i.Name)
      return { Name: i.Name, Arn: r.arn, State: r.state, EventPattern: JSON.stringify(r.pattern) }
    },
    ListTargetsByRule: (i) => ({ Targets: clone(rule(i.Rule).targets) }),
    ListTagsForResource: (i) => ({ Tags: tagList(ruleByArn(i.ResourceARN).tags) }),
  }

  const apply: Record<string, (i: Record<string, unknown>) => void> = {
    TagRole: (i) => Object.assign(role(i.RoleName).tags, fromList(i.Tags as never)),
    UntagRole: (i) => {
      for (const k of i.TagKeys as string[]) delete role(i.RoleName).tags[k]
    },
    UpdateAssumeRolePolicy: (i) => (role(i.RoleName).trust = JSON.parse(i.PolicyDocument as string)),
    AttachRolePolicy: (i) => role(i.RoleName).attached.push(i.PolicyArn as string),
    DetachRolePolicy: (i) => {
      const r = role(i.RoleName)
      r.attached = r.attached.filter((a) => a !== i.PolicyArn)
    },
    PutRolePolicy: (i) =>
      (role(i.RoleName).inline[i.PolicyName as string] = JSON.parse(i.PolicyDocument as string)),
    DeleteRolePolicy: (i) => delete role(i.RoleName).inline[i.PolicyName as string],
    DeleteRole: (i) => delete state.roles[i.RoleName as string],
    TagQueue: (i) => Object.assign(queueByUrl(i.QueueUrl).tags, i.Tags),
    UntagQueue: (i) => {
      for (const k of i.TagKeys as string[]) delete queueByUrl(i.QueueUrl).tags[k]
    },
    SetQueueAttributes: (i) => Object.assign(queueByUrl(i.QueueUrl).attributes, i.Attributes),
    DeleteQueue: (i) => delete state.queues[String(i.QueueUrl).split('/').pop() as string],
    TagResource: (i) => Object.assign(ruleByArn(i.ResourceARN).tags, fromList(i.Tags as never)),
    UntagResource: (i) => {
      for (const k of i.TagKeys as string[]) delete ruleByArn(i.ResourceARN).tags[k]
    },
    PutTargets: (i) => rule(i.Rule).targets.push(...(i.Targets as FakeRule['targets'])),
    RemoveTargets: (i) => {
      const r = rule(i.Rule)
      r.targets = r.targets.filter((t) => !(i.Ids as string[]).includes(t.Id))
    },
    EnableRule: (i) => (rule(i.Name).state = 'ENABLED'),
    DisableRule: (i) => (rule(i.Name).state = 'DISABLED'),
    DeleteRule: (i) => delete state.rules[i.Name as string],
  }

  const call = async (_s: string, op: string, input: Record<string, unknown> = {}) => {
    const f = reads[op]
    if (!f) throw new Error(`fake account: no read ${op}`)
    return clone(f(input))
  }
  const env = {
    aws: {
      call,
      write: async (_s: string, op: string, input: Record<string, unknown>) => {
        const f = apply[op]
        if (!f) throw new Error(`fake account: no write ${op}`)
        writes.push([op, clone(input)])
        f(input)
        return {}
      },
      all: onePage(call),
    },
    kube: { get: async () => null },
    sleep: async () => {},
    now: () => new Date(0),
  } as unknown as ApplyEnv
  return { state, writes, env }
}

function raise(e: Error): never {
  throw e
}
