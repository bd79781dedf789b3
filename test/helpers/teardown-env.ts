// A fake ApplyEnv for teardown's resources, call by call: AWS answers by operation (each checked against
// the service it belongs to; a missing one is "not found"), Kubernetes by path, every read and write logged.
import assert from 'node:assert/strict'
import type { ApplyEnv, Resource } from '../../src/plan/types.js'

export const OWN = { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': 'demo' }
export const tagList = (t: Record<string, string>) =>
  Object.entries(t).map(([Key, Value]) => ({ Key, Value }))
export const GONE = { action: 'unchanged', changes: [], note: 'already gone' }
export const FOREIGN_NOTE =
  'kept: karpctl did not make it (no karpctl.io/managed-by tag); remove it with the tool that made it (e.g. `terraform destroy`)'

export type Answer = (input: Record<string, unknown>) => unknown

/** The service each operation belongs to: a call to the right operation of the wrong service fails. */
export const SERVICE: Record<string, string> = {
  DescribeRule: 'eventbridge',
  ListTargetsByRule: 'eventbridge',
  ListTagsForResource: 'eventbridge',
  RemoveTargets: 'eventbridge',
  DisableRule: 'eventbridge',
  DeleteRule: 'eventbridge',
  UntagResource: 'eventbridge',
  GetQueueUrl: 'sqs',
  ListQueueTags: 'sqs',
  GetQueueAttributes: 'sqs',
  DeleteQueue: 'sqs',
  SetQueueAttributes: 'sqs',
  UntagQueue: 'sqs',
  ListPodIdentityAssociations: 'eks',
  DescribePodIdentityAssociation: 'eks',
  DeletePodIdentityAssociation: 'eks',
  ListOpenIDConnectProviderTags: 'iam',
  ListRoles: 'iam',
  DeleteOpenIDConnectProvider: 'iam',
  ListInstanceProfiles: 'iam',
  ListInstanceProfileTags: 'iam',
  RemoveRoleFromInstanceProfile: 'iam',
  DeleteInstanceProfile: 'iam',
  DescribeStackResources: 'cloudformation',
  DescribeSubnets: 'ec2',
  DescribeSecurityGroups: 'ec2',
  DescribeInstances: 'ec2',
  DescribeLaunchTemplates: 'ec2',
  TerminateInstances: 'ec2',
  DeleteLaunchTemplate: 'ec2',
  DeleteTags: 'ec2',
  RevokeSecurityGroupIngress: 'ec2',
}
export const serviceOf = (service: string, op: string) =>
  assert.equal(service, SERVICE[op] ?? '?', `${op} is an operation of ${SERVICE[op] ?? '?'}, not ${service}`)

/**
 * AWS answers by operation (a missing one is "not found"), Kubernetes by path; reads and writes logged.
 * `all` follows the pages as the real client does (the token named by the caller).
 */
export function env(
  o: { aws?: Record<string, Answer>; kube?: Record<string, unknown>; helm?: unknown } = {},
) {
  const reads: [string, unknown][] = []
  const writes: [string, unknown][] = []
  const kubeReads: string[] = []
  const call = async (service: string, op: string, input: Record<string, unknown> = {}) => {
    serviceOf(service, op)
    reads.push([op, input])
    const a = o.aws?.[op]
    if (!a) throw Object.assign(new Error(`${op} not found`), { name: 'NoSuchEntity' })
    return structuredClone(a(input))
  }
  const kubeGet = async (path: string) => {
    kubeReads.push(path)
    return structuredClone(o.kube?.[path] ?? null)
  }
  const e = {
    aws: {
      call,
      write: async (service: string, op: string, input: unknown) => {
        serviceOf(service, op)
        writes.push([op, structuredClone(input)])
        return {}
      },
      all: async (
        service: string,
        op: string,
        input: Record<string, unknown>,
        tokenField: string,
        page: (out: unknown) => { items?: unknown[]; next?: string },
      ) => {
        const items: unknown[] = []
        let token: string | undefined
        do {
          const p = page(await call(service, op, token ? { ...input, [tokenField]: token } : input))
          items.push(...(p.items ?? []))
          token = p.next
        } while (token)
        return items
      },
    },
    kube: {
      get: kubeGet,
      fresh: kubeGet,
      write: async (method: string, path: string, body?: unknown, contentType?: string) => {
        writes.push([
          `${method} ${path}`,
          body === undefined ? undefined : { body: structuredClone(body), contentType },
        ])
        return {}
      },
    },
    helm: async () => o.helm ?? {},
    ownershipTags: {},
    sleep: async () => {},
    now: () => new Date(0),
  } as unknown as ApplyEnv
  return { env: e, reads, writes, kubeReads }
}

/** Two pages of IAM listing `key` (Roles, InstanceProfiles), the second asked for by its Marker only. */
export const twoPages =
  (key: string, first: unknown[], second: unknown[]): Answer =>
  (i) => {
    if (i.Marker === 'page-2') return { [key]: second, IsTruncated: false }
    assert.deepEqual(i, {}, 'the first page is asked for without a token')
    return { [key]: first, IsTruncated: true, Marker: 'page-2' }
  }

/**
 * Observe, verdict and apply. `always`: apply whatever the verdict (an apply must itself do nothing for
 * what is gone or not karpctl's); otherwise only a changing verdict is applied, as the executor does.
 */
export async function run<S>(r: Resource<S>, e: ApplyEnv, always = true) {
  const cur = await r.observe(e)
  const verdict = r.verdict(cur)
  if (always || verdict.action !== 'unchanged') await r.apply(e, cur)
  return { cur, verdict }
}
