// The teardown plan as a whole: every step's address, name, group and dependencies for a cluster with
// a tenant and karpctl's release in its own namespace; what --keep-crds, access entries, a missing
// OIDC issuer, the repairs and --sweep change; where the releases are looked for; the spot role kept.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RunContext } from '../../../src/context/run-context.js'
import type { Facts } from '../../../src/facts/types.js'
import type { Resource } from '../../../src/plan/types.js'
import { discovered, teardownResources, type TeardownOptions } from '../../../src/teardown/teardown.js'
import { healthyFacts, healthyNodePool, ISSUER, withoutHelm } from '../../helpers/facts.js'

const HELM_SECRETS = `/api/v1/secrets?labelSelector=${encodeURIComponent('owner=helm,karpctl.io/managed-by=karpctl')}`

interface Page {
  Roles?: { RoleName?: string }[]
  IsTruncated?: boolean
  Marker?: string
}

/** A RunContext whose Helm secrets and IAM roles a test chooses; the pages of ListRoles as IAM gives them. */
function ctx(o: { secrets?: { namespace: string; name?: string }[] | null; rolePages?: Page[] } = {}) {
  const kubeReads: string[] = []
  const listed: unknown[] = []
  const c = {
    options: { clusterName: 'demo', region: 'us-west-2' },
    kube: {
      get: async (path: string) => {
        kubeReads.push(path)
        return o.secrets === null || o.secrets === undefined
          ? null
          : {
              items: o.secrets.map((s) => ({
                metadata: { namespace: s.namespace, labels: s.name ? { name: s.name } : {} },
              })),
            }
      },
    },
    aws: {
      all: async (
        service: string,
        op: string,
        input: unknown,
        tokenField: string,
        page: (out: Page) => { items?: unknown[]; next?: string },
      ) => {
        assert.deepEqual([service, op, input, tokenField], ['iam', 'ListRoles', {}, 'Marker'])
        const items: unknown[] = []
        for (const p of o.rolePages ?? [{ Roles: [] }]) {
          const r = page(p)
          listed.push(r.next)
          items.push(...(r.items ?? []))
        }
        return items
      },
    },
  } as unknown as RunContext
  return { ctx: c, kubeReads, listed }
}

const opts = (over: Partial<TeardownOptions> = {}): TeardownOptions => ({
  keepCrds: false,
  sweep: false,
  timeoutMs: 1000,
  ...over,
})
const shape = (rs: Resource[]) => rs.map((r) => [r.address, r.kind, r.name, r.group, r.dependsOn])
const byAddress = (rs: Resource[], a: string) => {
  const r = rs.find((x) => x.address === a)
  assert.ok(r, `no step ${a}`)
  return r
}

const CAPACITY = ['kube.nodepool.default', 'kube.ec2nodeclass.default']
const ACME_CAPACITY = ['tenant.acme.kube.ec2nodeclass.tenant', 'tenant.acme.kube.nodepool.tenant']
const FOUND_RULES = [
  'ScheduledChange',
  'SpotInterruption',
  'Rebalance',
  'InstanceStateChange',
  'CapacityReservationInterruption',
]

test('the whole plan: a tenant found by its role, the release in its own namespace, every step in order', async () => {
  const c = ctx({
    secrets: [{ namespace: 'karpenter', name: 'karpenter' }, { namespace: 'other' }],
    rolePages: [
      { Roles: [{ RoleName: 'KarpenterNodeRole-demo-acme' }], IsTruncated: true, Marker: 'm' },
      { Roles: [{ RoleName: 'KarpenterNodeRole-demo' }, {}], IsTruncated: false, Marker: 'ignored' },
    ],
  })
  const rs = await teardownResources(c.ctx, healthyFacts(), opts({ sweep: true }))
  assert.deepEqual(c.kubeReads, [HELM_SECRETS])
  assert.deepEqual(c.listed, ['m', undefined], "ListRoles' pages followed by their Marker while truncated")
  const nodeRoleArn = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'
  assert.deepEqual(shape(rs), [
    ['tenant.acme.kube.nodepool.tenant', 'NodePool', 'acme', 'Tenant acme', []],
    [
      'tenant.acme.kube.ec2nodeclass.tenant',
      'EC2NodeClass',
      'acme',
      'Tenant acme',
      ['tenant.acme.kube.nodepool.tenant'],
    ],
    [
      'tenant.acme.aws-auth.remove',
      'aws-auth mapping',
      `${nodeRoleArn}-acme`,
      'Tenant acme',
      ['tenant.acme.kube.ec2nodeclass.tenant'],
    ],
    [
      'tenant.acme.iam-policy.tenant-passrole',
      'IAM inline policy',
      'KarpenterControllerRole-demo/KarpctlTenantPassRole-acme',
      'Tenant acme',
      ['tenant.acme.kube.ec2nodeclass.tenant'],
    ],
    [
      'tenant.acme.iam-role.tenant',
      'IAM role',
      'KarpenterNodeRole-demo-acme',
      'Tenant acme',
      [
        'tenant.acme.kube.ec2nodeclass.tenant',
        'tenant.acme.aws-auth.remove',
        'tenant.acme.iam-policy.tenant-passrole',
      ],
    ],
    ['kube.nodepool.default', 'NodePool', 'default', 'Kubernetes', []],
    ['kube.ec2nodeclass.default', 'EC2NodeClass', 'default', 'Kubernetes', ['kube.nodepool.default']],
    ['helm.karpenter', 'Helm release', 'karpenter/karpenter', 'Kubernetes', [...CAPACITY, ...ACME_CAPACITY]],
    ['helm.karpenter-crd', 'Helm release', 'kube-system/karpenter-crd', 'Kubernetes', ['helm.karpenter']],
    [
      'kube.crds.restore',
      'CRD ownership',
      'karpctl.io/adopted-by=demo',
      'Kubernetes',
      ['helm.karpenter-crd'],
    ],
    ['sqs-queue.interruption', 'SQS queue', 'demo', 'Interruption handling', ['helm.karpenter']],
    ...FOUND_RULES.map((k) => [
      `events-rule.${k}Rule`,
      'EventBridge rule',
      `Karpenter-demo-${k}`,
      'Interruption handling',
      ['helm.karpenter'],
    ]),
    ...FOUND_RULES.map((k) => [
      `events-rule.found.Karpenter-demo-${k}Rule`,
      'EventBridge rule',
      `Karpenter-demo-${k}Rule`,
      'Interruption handling',
      ['helm.karpenter'],
    ]),
    [
      'eks-pod-identity.controller',
      'EKS Pod Identity association',
      'karpenter/karpenter',
      'Controller identity',
      ['helm.karpenter'],
    ],
    [
      'iam-role.controller',
      'IAM role',
      'KarpenterControllerRole-demo',
      'IAM',
      ['helm.karpenter', 'eks-pod-identity.controller', 'tenant.acme.iam-policy.tenant-passrole'],
    ],
    [
      'install.aws-auth.remove',
      'aws-auth mapping',
      nodeRoleArn,
      'Cluster access',
      ['kube.ec2nodeclass.default'],
    ],
    [
      'iam-role.node',
      'IAM role',
      'KarpenterNodeRole-demo',
      'IAM',
      ['kube.ec2nodeclass.default', 'helm.karpenter', 'install.aws-auth.remove'],
    ],
    ['iam-oidc-provider.cluster', 'IAM OIDC provider', ISSUER, 'IAM', ['iam-role.controller']],
    [
      'ec2-tags.restore',
      'recorded tags',
      'karpctl.io/added-tags, karpctl.io/repaired-tags (cluster demo)',
      'Network',
      ['helm.karpenter', ...CAPACITY, ...ACME_CAPACITY],
    ],
    [
      'ec2-ingress.restore',
      'recorded security group rules',
      'karpctl.io/added-ingress-8443, karpctl.io/repaired-ingress-8443',
      'Network',
      ['helm.karpenter', ...CAPACITY, ...ACME_CAPACITY],
    ],
    [
      'kube.cluster-autoscaler.restore',
      'Deployment',
      'scaled down by karpctl (karpctl.io/scaled-down-from-replicas)',
      'Kubernetes',
      ['helm.karpenter'],
    ],
    [
      'sweep.karpenter-orphans',
      "Karpenter's leftovers",
      'tagged for cluster demo',
      'Sweep',
      ['helm.karpenter'],
    ],
    ['iam-service-linked-role.spot', 'IAM service-linked role', 'AWSServiceRoleForEC2Spot', 'IAM', []],
  ])
  assert.deepEqual(byAddress(rs, 'sweep.karpenter-orphans').desired, { sweep: true })
})

test('--keep-crds: the CRD release and the CRDs restore are not planned; without --sweep the orphans are only listed', async () => {
  const rs = await teardownResources(ctx().ctx, healthyFacts(), opts({ keepCrds: true }))
  assert.ok(!rs.some((r) => r.address === 'helm.karpenter-crd' || r.address === 'kube.crds.restore'))
  assert.deepEqual(byAddress(rs, 'sweep.karpenter-orphans').desired, { sweep: false })
})

test('a cluster allowing access entries: the node role’s access entry goes too, before the role', async () => {
  for (const mode of ['API', 'API_AND_CONFIG_MAP'] as const) {
    const facts = healthyFacts((f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = mode
    })
    const rs = await teardownResources(ctx().ctx, facts, opts())
    const entry = byAddress(rs, 'install.eks-access-entry.remove')
    assert.deepEqual(
      [entry.name, entry.dependsOn],
      ['arn:aws:iam::123456789012:role/KarpenterNodeRole-demo', ['kube.ec2nodeclass.default']],
    )
    assert.deepEqual(byAddress(rs, 'iam-role.node').dependsOn, [
      'kube.ec2nodeclass.default',
      'helm.karpenter',
      'install.eks-access-entry.remove',
      'install.aws-auth.remove',
    ])
  }
  const configMap = await teardownResources(ctx().ctx, healthyFacts(), opts())
  assert.ok(!configMap.some((r) => r.address.includes('eks-access-entry')))
})

test('the releases are looked for where their Helm secrets are, else where the release was found, else kube-system', async () => {
  const ns = async (c: ReturnType<typeof ctx>, facts: Facts) => {
    const rs = await teardownResources(c.ctx, facts, opts())
    return [
      byAddress(rs, 'helm.karpenter').name,
      byAddress(rs, 'helm.karpenter-crd').name,
      byAddress(rs, 'eks-pod-identity.controller').name,
    ]
  }
  assert.deepEqual(
    await ns(
      ctx({
        secrets: [
          { namespace: 'a', name: 'karpenter' },
          { namespace: 'b', name: 'karpenter-crd' },
        ],
      }),
      healthyFacts(),
    ),
    ['a/karpenter', 'b/karpenter-crd', 'a/karpenter'],
  )
  const inKarpenter = healthyFacts((f) => {
    if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.namespace = 'karpenter'
  })
  assert.deepEqual(await ns(ctx(), inKarpenter), [
    'karpenter/karpenter',
    'karpenter/karpenter-crd',
    'karpenter/karpenter',
  ])
  const noRelease = healthyFacts((f) => {
    f.kube.release = { ok: true, value: null }
  })
  assert.deepEqual(await ns(ctx({ secrets: [] }), noRelease), [
    'kube-system/karpenter',
    'kube-system/karpenter-crd',
    'kube-system/karpenter',
  ])
  const unread = healthyFacts((f) => {
    f.kube.release = {
      ok: false,
      error: { code: 'Forbidden', kind: 'denied', message: 'no', read: 'secrets' },
    }
  })
  assert.deepEqual(await ns(ctx(), unread), [
    'kube-system/karpenter',
    'kube-system/karpenter-crd',
    'kube-system/karpenter',
  ])
})

test("the repairs' records go only with karpctl's release, or when no Karpenter runs any more", async () => {
  const names = async (c: ReturnType<typeof ctx>, facts: Facts) => {
    const rs = await teardownResources(c.ctx, facts, opts())
    return [byAddress(rs, 'ec2-tags.restore').name, byAddress(rs, 'ec2-ingress.restore').name]
  }
  const withRepairs = [
    'karpctl.io/added-tags, karpctl.io/repaired-tags (cluster demo)',
    'karpctl.io/added-ingress-8443, karpctl.io/repaired-ingress-8443',
  ]
  const without = ['karpctl.io/added-tags (cluster demo)', 'karpctl.io/added-ingress-8443']
  // Another tool's release is running (no karpctl secret for it): the repairs stay.
  assert.deepEqual(
    await names(ctx({ secrets: [{ namespace: 'kube-system', name: 'karpenter-crd' }] }), healthyFacts()),
    without,
  )
  assert.deepEqual(await names(ctx(), healthyFacts()), without)
  assert.deepEqual(
    await names(ctx({ secrets: [{ namespace: 'kube-system', name: 'karpenter' }] }), healthyFacts()),
    withRepairs,
  )
  const gone = healthyFacts((f) => {
    f.kube.release = { ok: true, value: null }
  })
  assert.deepEqual(await names(ctx(), gone), withRepairs)
  // No release, but Argo CD's controller still runs: the repairs it needs stay.
  assert.deepEqual(await names(ctx(), healthyFacts(withoutHelm())), without)
  const noneAtAll = healthyFacts(
    (f) => ((f.kube.release = { ok: true, value: null }), (f.kube.rendered = { ok: true, value: null })),
  )
  assert.deepEqual(await names(ctx(), noneAtAll), withRepairs)
  const unread = healthyFacts((f) => {
    f.kube.release = {
      ok: false,
      error: { code: 'Forbidden', kind: 'denied', message: 'no', read: 'secrets' },
    }
  })
  assert.deepEqual(await names(ctx(), unread), without)
})

test('no OIDC issuer: no provider planned; the restores are looked for without a VPC', async () => {
  const facts = healthyFacts((f) => {
    if (f.eks.cluster.ok && f.eks.cluster.value) {
      f.eks.cluster.value.oidcIssuer = undefined
      f.eks.cluster.value.vpcId = undefined as unknown as string
    }
  })
  const rs = await teardownResources(ctx().ctx, facts, opts())
  assert.ok(!rs.some((r) => r.address === 'iam-oidc-provider.cluster'))
  const unreadCluster = healthyFacts((f) => {
    f.eks.cluster = { ok: false, error: { code: 'AccessDenied', kind: 'denied', message: 'no', read: 'eks' } }
  })
  const rs2 = await teardownResources(ctx().ctx, unreadCluster, opts())
  assert.ok(
    !rs2.some((r) => r.address === 'iam-oidc-provider.cluster' || r.address.includes('eks-access-entry')),
  )
})

test('tenants: from labelled NodePools and from node roles with the cluster’s prefix, once each, sorted', async () => {
  const facts = healthyFacts((f) => {
    const zeta = healthyNodePool()
    zeta.metadata = { name: 'zeta', labels: { 'karpctl.io/tenant': 'zeta' } }
    const acme = healthyNodePool()
    acme.metadata = { name: 'acme-pool', labels: { 'karpctl.io/tenant': 'acme' } }
    f.kube.nodePools = { ok: true, value: [healthyNodePool(), zeta, acme] }
  })
  const c = ctx({
    rolePages: [
      {
        Roles: [
          { RoleName: 'KarpenterNodeRole-demo-beta' },
          { RoleName: 'KarpenterNodeRole-demo-acme' },
          { RoleName: 'KarpenterNodeRole-other-gamma' },
          { RoleName: 'x-KarpenterNodeRole-demo-delta' },
        ],
      },
    ],
  })
  const rs = await teardownResources(c.ctx, facts, opts())
  const tenants = [
    ...new Set(rs.filter((r) => r.address.startsWith('tenant.')).map((r) => r.address.split('.')[1])),
  ]
  assert.deepEqual(tenants, ['acme', 'beta', 'zeta'])
  for (const t of tenants)
    assert.ok(rs.filter((r) => r.address.startsWith(`tenant.${t}.`)).every((r) => r.group === `Tenant ${t}`))
  const unread = healthyFacts((f) => {
    f.kube.nodePools = {
      ok: false,
      error: { code: 'Forbidden', kind: 'denied', message: 'no', read: 'nodepools' },
    }
  })
  const none = await teardownResources(ctx().ctx, unread, opts())
  assert.ok(!none.some((r) => r.address.startsWith('tenant.')))
})

test('the spot service-linked role is never removed: kept (account-wide) or not present', async () => {
  const present = byAddress(
    await teardownResources(ctx().ctx, healthyFacts(), opts()),
    'iam-service-linked-role.spot',
  )
  assert.deepEqual([present.desired, present.permissions], [{ kept: true }, []])
  assert.equal(await present.observe({} as never), null)
  assert.deepEqual(present.verdict(null), {
    action: 'unchanged',
    changes: [],
    note: 'kept: account-wide, other clusters may launch spot with it',
  })
  await present.apply({} as never, null)
  for (const spot of [
    { ok: true, value: null },
    { ok: false, error: { code: 'AccessDenied', kind: 'denied', message: 'no', read: 'iam' } },
  ]) {
    const facts = healthyFacts((f) => {
      f.iam.spotServiceLinkedRole = spot as Facts['iam']['spotServiceLinkedRole']
    })
    const absent = byAddress(
      await teardownResources(ctx().ctx, facts, opts()),
      'iam-service-linked-role.spot',
    )
    assert.deepEqual(absent.verdict(null), { action: 'unchanged', changes: [], note: 'not present' })
  }
})

test('the default NodePool waits for its NodeClaims and nodes (by the default pool’s label) within the timeout', async () => {
  const rs = await teardownResources(ctx().ctx, healthyFacts(), opts({ timeoutMs: -1 }))
  const pool = byAddress(rs, 'kube.nodepool.default')
  const live = { metadata: { name: 'default', labels: { 'app.kubernetes.io/managed-by': 'karpctl' } } }
  assert.equal(pool.verdict(live).note, 'waits for its NodeClaims and nodes to go')
  const fresh: string[] = []
  const writes: string[] = []
  const env = {
    kube: {
      get: async () => live,
      fresh: async (p: string) => {
        fresh.push(p)
        return { items: [{}] }
      },
      write: async (m: string, p: string) => void writes.push(`${m} ${p}`),
    },
    sleep: async () => {},
  }
  await assert.rejects(
    pool.apply(env as never, live),
    /^Error: 2 NodeClaims and nodes of NodePool default still draining/,
  )
  const sel = encodeURIComponent('karpenter.sh/nodepool=default')
  assert.deepEqual(fresh, [
    `/apis/karpenter.sh/v1/nodeclaims?labelSelector=${sel}`,
    `/api/v1/nodes?labelSelector=${sel}`,
  ])
  assert.deepEqual(writes, ['DELETE /apis/karpenter.sh/v1/nodepools/default'])
  // The EC2NodeClass: deleted, then waited for until gone (Karpenter lifts its finalizer first).
  const nodeClass = byAddress(rs, 'kube.ec2nodeclass.default')
  const gone = { ...env, kube: { ...env.kube, fresh: async (p: string) => (fresh.push(p), null) } } as never
  await nodeClass.apply(gone, { metadata: { name: 'default', labels: {} } })
  assert.deepEqual(writes.slice(1), ['DELETE /apis/karpenter.k8s.aws/v1/ec2nodeclasses/default'])
  assert.equal(fresh.at(-1), '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default')
  assert.equal(
    nodeClass.verdict({
      metadata: { name: 'default', labels: { 'app.kubernetes.io/managed-by': 'karpctl' } },
    }).note,
    'waits until it is gone (the Karpenter controller lifts its finalizers)',
  )
})

test('discovered: nothing found is nothing (no queue: no rules; no ServiceAccount)', () => {
  const facts = healthyFacts((f) => {
    f.sqs.queue = { ok: true, value: null }
    f.kube.serviceAccount = { ok: true, value: null }
    f.iam.controllerRoleName = null
  })
  assert.deepEqual(discovered(facts), { controllerRole: null, queue: null, rules: [], serviceAccount: null })
  const unread = healthyFacts((f) => {
    const e = {
      ok: false as const,
      error: { code: 'AccessDenied', kind: 'denied' as const, message: 'no', read: 'x' },
    }
    f.sqs.queue = e
    f.events.rules = e
    f.kube.serviceAccount = e
  })
  assert.deepEqual(discovered(unread), {
    controllerRole: 'KarpenterControllerRole-demo',
    queue: null,
    rules: [],
    serviceAccount: null,
  })
})
