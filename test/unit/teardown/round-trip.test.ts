// Install's changes to what karpctl does not own, then teardown's give-back, on small in-memory
// services that behave as EC2 (a non-default VPC) and the API server do: the node security group and
// the cluster-autoscaler end exactly as they were before install, and what was there before stays.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { clusterAutoscalerScaleDown } from '../../../src/plan/resources/cluster-autoscaler.js'
import { autoscalerRestore } from '../../../src/plan/resources/autoscaler-restore.js'
import { recordedIngressRestore } from '../../../src/plan/resources/recorded-ingress.js'
import { webhookIngress } from '../../../src/plan/resources/webhook-ingress.js'
import type { ApplyEnv, Resource } from '../../../src/plan/types.js'
import { awsError } from '../../helpers/fake-resource.js'

interface Pair {
  GroupId: string
}
interface Permission {
  IpProtocol: string
  FromPort?: number
  ToPort?: number
  UserIdGroupPairs?: Pair[]
}
interface Group {
  GroupId: string
  VpcId: string
  IpPermissions: Permission[]
  Tags: { Key: string; Value: string }[]
}
interface Filter {
  Name: string
  Values: string[]
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
const samePermission = (a: Permission, b: Permission) =>
  a.IpProtocol === b.IpProtocol &&
  a.FromPort === b.FromPort &&
  a.ToPort === b.ToPort &&
  JSON.stringify(a.UserIdGroupPairs ?? []) === JSON.stringify(b.UserIdGroupPairs ?? [])

/** EC2's security groups in a non-default VPC: a revoke of a rule that does not exist is an error. */
function ec2(groups: Group[]) {
  const state = clone(groups)
  const group = (id: unknown) => state.find((g) => g.GroupId === id) ?? assert.fail(`no group ${String(id)}`)
  const reads: Record<string, (i: Record<string, unknown>) => unknown> = {
    DescribeSecurityGroups: (i) => {
      const ids = i.GroupIds as string[] | undefined
      const filters = (i.Filters ?? []) as Filter[]
      const match = (g: Group, f: Filter) =>
        f.Name === 'tag-key'
          ? g.Tags.some((t) => f.Values.includes(t.Key))
          : f.Name === 'vpc-id'
            ? f.Values.includes(g.VpcId)
            : assert.fail(`filter ${f.Name}`)
      return {
        SecurityGroups: state.filter(
          (g) => (!ids || ids.includes(g.GroupId)) && filters.every((f) => match(g, f)),
        ),
      }
    },
  }
  const writes: Record<string, (i: Record<string, unknown>) => void> = {
    CreateTags: (i) => {
      for (const id of i.Resources as string[]) {
        const g = group(id)
        for (const t of i.Tags as { Key: string; Value: string }[]) {
          g.Tags = g.Tags.filter((x) => x.Key !== t.Key)
          g.Tags.push(t)
        }
      }
    },
    DeleteTags: (i) => {
      for (const id of i.Resources as string[]) {
        const g = group(id)
        const keys = (i.Tags as { Key: string }[]).map((t) => t.Key)
        g.Tags = g.Tags.filter((t) => !keys.includes(t.Key))
      }
    },
    AuthorizeSecurityGroupIngress: (i) => {
      group(i.GroupId).IpPermissions.push(...clone(i.IpPermissions as Permission[]))
    },
    RevokeSecurityGroupIngress: (i) => {
      const g = group(i.GroupId)
      for (const p of i.IpPermissions as Permission[]) {
        const at = g.IpPermissions.findIndex((x) => samePermission(x, p))
        if (at < 0)
          throw awsError(
            'InvalidPermission.NotFound',
            'The specified rule does not exist in this security group.',
            400,
          )
        g.IpPermissions.splice(at, 1)
      }
    },
  }
  const env = {
    aws: {
      call: async (_s: string, op: string, i: Record<string, unknown> = {}) =>
        clone((reads[op] ?? assert.fail(`read ${op}`))(i)),
      write: async (_s: string, op: string, i: Record<string, unknown>) => {
        ;(writes[op] ?? assert.fail(`write ${op}`))(clone(i))
        return {}
      },
    },
    sleep: async () => {},
  } as unknown as ApplyEnv
  return { env, state }
}

async function run(r: Resource, env: ApplyEnv) {
  const plan = await buildPlan('t', [r], env)
  return applyPlan(plan, env)
}

const VPC = 'vpc-1'
const NODE = 'sg-node'
const CLUSTER = 'sg-cluster'
const nodeGroup = (): Group => ({
  GroupId: NODE,
  VpcId: VPC,
  IpPermissions: [
    // Rules someone else made: the cluster SG on 443, another group on 8443.
    { IpProtocol: 'tcp', FromPort: 443, ToPort: 443, UserIdGroupPairs: [{ GroupId: CLUSTER }] },
    { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: [{ GroupId: 'sg-bastion' }] },
  ],
  Tags: [{ Key: 'Name', Value: 'nodes' }],
})
const add = webhookIngress({ nodeGroupId: NODE, clusterGroupId: CLUSTER, arn: 'arn' })
const restore = recordedIngressRestore({ vpcId: VPC, dependsOn: [] })

test('the 8443 rule install adds is what teardown revokes: the group ends as it was, the other rules kept', async () => {
  const before = nodeGroup()
  const aws = ec2([before])
  assert.deepEqual((await run(add, aws.env)).failed, [])
  assert.equal(aws.state[0]?.IpPermissions.length, 3)
  // A re-run of install changes nothing.
  assert.equal((await buildPlan('t', [add], aws.env)).steps[0]?.verdict.action, 'unchanged')
  assert.deepEqual((await run(restore, aws.env)).failed, [])
  assert.deepEqual(aws.state, [before])
  // A re-run of teardown finds nothing recorded.
  assert.equal((await buildPlan('t', [restore], aws.env)).steps[0]?.verdict.action, 'unchanged')
})

test('a recorded rule that is already gone (install stopped between the record and the rule): teardown drops the record', async () => {
  const before = nodeGroup()
  const aws = ec2([
    { ...clone(before), Tags: [...before.Tags, { Key: 'karpctl.io/added-ingress-8443', Value: CLUSTER }] },
  ])
  const r = await run(restore, aws.env)
  assert.deepEqual(r.failed, [])
  assert.deepEqual(aws.state, [before])
})

interface Deployment {
  metadata: { namespace: string; name: string; annotations?: Record<string, string> }
  spec: { replicas: number }
}

/** RFC 7386: null deletes, objects merge, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

/** The API server's Deployments: the list and merge patches. */
function apps(items: Deployment[]) {
  let state = clone(items)
  const read = async (path: string) => {
    assert.equal(path, '/apis/apps/v1/deployments')
    return { items: clone(state) }
  }
  const env = {
    kube: {
      get: read,
      fresh: read,
      write: async (method: string, path: string, body: unknown, type?: string) => {
        assert.deepEqual([method, type], ['PATCH', 'application/merge-patch+json'])
        state = state.map((d) =>
          path === `/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}`
            ? (mergePatch(d, body) as Deployment)
            : d,
        )
      },
    },
    sleep: async () => {},
  } as unknown as ApplyEnv
  const scale = (name: string, replicas: number) =>
    (state = state.map((d) => (d.metadata.name === name ? { ...d, spec: { replicas } } : d)))
  return { env, state: () => state, scale }
}

test('the autoscaler install scales down is given back by teardown with the replicas it had, and its annotations as they were', async () => {
  const before: Deployment[] = [
    {
      metadata: { namespace: 'kube-system', name: 'cluster-autoscaler', annotations: { team: 'platform' } },
      spec: { replicas: 3 },
    },
    { metadata: { namespace: 'kube-system', name: 'coredns' }, spec: { replicas: 2 } },
  ]
  const k = apps(before)
  const down = clusterAutoscalerScaleDown({
    namespace: 'kube-system',
    name: 'cluster-autoscaler',
    dependsOn: [],
  })
  assert.deepEqual((await run(down, k.env)).failed, [])
  assert.equal(k.state()[0]?.spec.replicas, 0)
  // Someone scales it back up to 1, and install runs again: scaled down again, the first record kept.
  k.scale('cluster-autoscaler', 1)
  assert.deepEqual((await run(down, k.env)).applied, ['kube.cluster-autoscaler'])
  assert.equal(k.state()[0]?.spec.replicas, 0)
  assert.deepEqual((await run(autoscalerRestore({ dependsOn: [] }), k.env)).failed, [])
  assert.deepEqual(k.state(), before)
})
