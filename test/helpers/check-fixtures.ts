// Edits of the healthy fixture (helpers/facts.ts) shared by the check tests and their "-conditions"
// twins (mutation testing): one copy of each, so both files break the same fixture the same way.
import assert from 'node:assert/strict'
import type { Finding } from '../../src/checks/types.js'
import type {
  AttachedPolicy,
  EC2NodeClass,
  ClusterAutoscalerDeployment,
  CustomResourceDefinition,
  EventRule,
  Facts,
  KmsKey,
  NodePool,
  PermissionEvaluation,
  RoleFacts,
  Taint,
} from '../../src/facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../src/policy/types.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  healthyFacts,
  healthyNodeClass,
  NODE_ROLE_ARN,
  nodeRole,
  ok,
  passRoleEvaluation,
  REGION,
} from './facts.js'

/** A CustomResourceDefinition as the collector reads one: its group from its name, the first version stored. */
export const crd = (
  name: string,
  servedVersions: string[] = ['v1'],
  over: Partial<CustomResourceDefinition> = {},
): CustomResourceDefinition => ({
  name,
  group: name.slice(name.indexOf('.') + 1),
  servedVersions,
  storageVersion: servedVersions[0],
  labels: {},
  annotations: {},
  ...over,
})

/** The facts of role `name`, which the fixture read. */
export function roleOf(f: Facts, name: string): RoleFacts {
  const r = f.iam.roles[name]
  assert.ok(r?.ok && r.value)
  return r.value
}

/** The policies attached to role `name`, which the fixture read. */
export function attachedOf(f: Facts, name: string): AttachedPolicy[] {
  const a = roleOf(f, name).attached
  assert.ok(a.ok)
  return a.value
}

export const asList = (v: string | string[] | undefined) =>
  v === undefined ? [] : Array.isArray(v) ? v : [v]

/** Rewrites every statement of the policies attached to role `name` (null drops it). */
export const editStatements =
  (name: string, edit: (s: PolicyStatement) => PolicyStatement | null) => (f: Facts) => {
    for (const p of attachedOf(f, name)) {
      if (p.document)
        p.document = {
          ...p.document,
          Statement: p.document.Statement.map(edit).filter((s) => s !== null),
        }
    }
  }

/** Takes `actions` out of role `name`'s attached policies (a statement left without any is dropped). */
export const dropActions = (name: string, ...actions: string[]) =>
  editStatements(name, (s) => {
    const kept = asList(s.Action).filter((a) => !actions.includes(a))
    return kept.length === 0 ? null : { ...s, Action: kept }
  })

/** The same edits, of the controller role (controller-policy's tests). */
export const controllerRole = {
  role: (f: Facts): RoleFacts => roleOf(f, CONTROLLER_ROLE),
  attachedOf: (f: Facts): AttachedPolicy[] => attachedOf(f, CONTROLLER_ROLE),
  /** Rewrites every statement of the reference policies attached in the healthy fixture. */
  editStatements: (edit: (s: PolicyStatement) => PolicyStatement | null) =>
    editStatements(CONTROLLER_ROLE, edit),
  dropActions: (...actions: string[]) => dropActions(CONTROLLER_ROLE, ...actions),
}

/** Detaches the managed policies `names` from role `name`. */
export const withoutPolicies =
  (name: string, ...names: string[]) =>
  (f: Facts) => {
    const attached = roleOf(f, name).attached
    if (attached.ok) roleOf(f, name).attached = ok(attached.value.filter((p) => !names.includes(p.name)))
  }

/** The PassRole evaluation of the node role `arn` (the fixture's node role by default). */
export const evaluated =
  (over: Partial<PermissionEvaluation>, arn = NODE_ROLE_ARN) =>
  (f: Facts) => {
    f.iam.passRole[arn] = ok(passRoleEvaluation({ resource: arn, ...over }))
  }

/** EC2NodeClasses nc0, nc1, … : the healthy one's spec with each of `specs` laid over it. */
export const nodeClasses =
  (...specs: Partial<ReturnType<typeof healthyNodeClass>['spec']>[]) =>
  (f: Facts) => {
    f.kube.nodeClasses = ok(
      specs.map((spec, i) => {
        const nc = healthyNodeClass()
        return { ...nc, metadata: { name: `nc${i}` }, spec: { ...nc.spec, ...spec } }
      }),
    )
  }

/** The finding about `subject` (one must exist). */
export function bySubject(findings: Finding[], subject: string): Finding {
  const f = findings.find((x) => x.subject === subject)
  assert.ok(f, `a finding about ${subject}: ${findings.map((x) => `${x.subject} ${x.status}`).join(', ')}`)
  return f
}

// ---- a customer managed KMS key on the EBS volumes (ebs-kms-key) ----

export const KEY_ID = '1234abcd-12ab-34cd-56ef-1234567890ab'
export const KEY_ARN = `arn:aws:kms:${REGION}:${ACCOUNT}:key/${KEY_ID}`
export const KEY_ALIAS = 'alias/karpenter-ebs'
export const ACCOUNT_ROOT = `arn:aws:iam::${ACCOUNT}:root`
export const VIA_EC2 = `ec2.${REGION}.amazonaws.com`

export const policyDoc = (...Statement: PolicyStatement[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement,
})

/** The default key policy of a key made in the console or by CreateKey: the account root, kms:*. */
export const rootStatement: PolicyStatement = {
  Sid: 'Enable IAM User Permissions',
  Effect: 'Allow',
  Principal: { AWS: ACCOUNT_ROOT },
  Action: 'kms:*',
  Resource: '*',
}

/** Key administrators: a role of the account, every KMS action. */
export const keyAdmin: PolicyStatement = {
  Sid: 'KeyAdmins',
  Effect: 'Allow',
  Principal: { AWS: `arn:aws:iam::${ACCOUNT}:role/Admin` },
  Action: 'kms:*',
  Resource: '*',
}

export const customerKey = (policy: PolicyDocument, over: Partial<KmsKey> = {}): KmsKey => ({
  arn: KEY_ARN,
  keyId: KEY_ID,
  accountId: ACCOUNT,
  keyManager: 'CUSTOMER',
  keyState: 'Enabled',
  policy: ok(policy),
  ...over,
})

/** The healthy cluster with its `default` EC2NodeClass encrypting its root volume with `id`. */
export function withKey(key: KmsKey | null, mutate?: (f: Facts) => void, id = KEY_ALIAS): Facts {
  return healthyFacts((f) => {
    const nc = f.kube.nodeClasses.ok ? f.kube.nodeClasses.value[0] : undefined
    assert.ok(nc)
    nc.spec.blockDeviceMappings = [
      {
        deviceName: '/dev/xvda',
        rootVolume: true,
        ebs: { encrypted: true, kmsKeyID: id, volumeSize: '20Gi' },
      },
    ]
    f.kms = { keys: { [id]: ok(key) } }
    mutate?.(f)
  })
}

/** The Karpenter chart (and app) version of the release in the fixture. */
export const setChartVersion = (v: string, app?: string) => (f: Facts) => {
  if (f.kube.release.ok && f.kube.release.value) {
    f.kube.release.value.chartVersion = v
    if (app !== undefined) f.kube.release.value.appVersion = app
  }
}

// ---- a cluster-autoscaler beside Karpenter (cluster-autoscaler) ----

export const CA_AUTO =
  '--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/demo'
export const CA_ASG = 'eks-system-2ac6e2b1-1b2c-3d4e-5f60-718293a4b5c6'

/** A cluster-autoscaler Deployment `kube-system/cluster-autoscaler` run with `args`. */
export const ca = (args: string[], replicas = 1): ClusterAutoscalerDeployment => ({
  namespace: 'kube-system',
  name: 'cluster-autoscaler',
  replicas,
  annotations: {},
  args: ['./cluster-autoscaler', '--cloud-provider=aws', ...args],
})

/** The healthy cluster plus one managed node group `system` (where the controller runs) and `ca`. */
export const withCa = (a: ClusterAutoscalerDeployment | null, mutate?: (f: Facts) => void) =>
  healthyFacts((f) => {
    f.kube.clusterAutoscalers = ok(a ? [a] : [])
    f.eks.nodegroups = ok([
      { name: 'system', autoScalingGroups: [CA_ASG] },
      { name: 'batch', autoScalingGroups: ['eks-batch-0000'] },
    ])
    f.kube.nodes = ok([
      {
        name: 'ip-10-0-1-1',
        labels: { 'eks.amazonaws.com/nodegroup': 'system' },
        taints: [],
        ready: true,
        karpenter: false,
      },
    ])
    f.kube.pods = ok([
      {
        metadata: { name: 'karpenter-abc', namespace: 'kube-system' },
        nodeName: 'ip-10-0-1-1',
        containerStatuses: [],
      },
    ])
    mutate?.(f)
  })

// ---- the interruption queue (interruption-queue, interruption-rules) ----

/** settings.interruptionQueue of the release, the controller's INTERRUPTION_QUEUE unset. */
export const setQueueSetting = (value: unknown) => (f: Facts) => {
  if (!f.kube.release.ok || !f.kube.release.value) return
  const settings = f.kube.release.value.computedValues.settings as Record<string, unknown>
  settings.interruptionQueue = value
  if (f.kube.deployment.ok && f.kube.deployment.value) delete f.kube.deployment.value.env.INTERRUPTION_QUEUE
}

/** The access policy of the interruption queue. */
export const setQueuePolicy = (policy: PolicyDocument | null) => (f: Facts) => {
  if (f.sqs.queue.ok && f.sqs.queue.value) f.sqs.queue.value.policy = policy
}

/** The EventBridge rules the collector found, edited. */
export const editRules = (edit: (rules: EventRule[]) => EventRule[]) => (f: Facts) => {
  if (f.events.rules.ok) f.events.rules = ok(edit(f.events.rules.value))
}

export const isSpotRule = (r: EventRule) => r.name.endsWith('SpotInterruptionRule')

/** A queue the rules may still send to after a reinstall. */
export const OLD_QUEUE_ARN = 'arn:aws:sqs:us-west-2:123456789012:demo-old'

// ---- tenant NodePools (tenant-isolation) ----

export interface TenantOpts {
  role?: string
  nodeClass?: string
  taints?: Taint[]
  labels?: Record<string, string>
  poolLabel?: boolean
}

/** A NodePool for `tenant`, isolated as karpctl makes them unless `o` says otherwise. */
export function tenantPool(tenant: string, o: TenantOpts = {}): NodePool {
  return {
    metadata: { name: tenant, labels: o.poolLabel === false ? {} : { 'karpctl.io/tenant': tenant } },
    spec: {
      template: {
        metadata: { labels: o.labels ?? { 'karpctl.io/tenant': tenant } },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: o.nodeClass ?? tenant },
          taints: o.taints ?? [{ key: 'karpctl.io/tenant', value: tenant, effect: 'NoSchedule' }],
        },
      },
    },
  }
}

export function tenantClass(name: string, role = `KarpenterNodeRole-demo-${name}`): EC2NodeClass {
  return {
    metadata: { name },
    spec: {
      role,
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
    },
  }
}

/** The healthy install plus tenants: each entry adds a NodePool and (unless it reuses one) an EC2NodeClass. */
export function withTenants(tenants: [string, TenantOpts?][], mutate?: (f: Facts) => void): Facts {
  return healthyFacts((f) => {
    if (!f.kube.nodePools.ok || !f.kube.nodeClasses.ok) throw new Error('fixture')
    for (const [name, o = {}] of tenants) {
      f.kube.nodePools.value.push(tenantPool(name, o))
      const nc = o.nodeClass ?? name
      if (!f.kube.nodeClasses.value.some((c) => c.metadata.name === nc))
        f.kube.nodeClasses.value.push(tenantClass(nc, o.role))
    }
    mutate?.(f)
  })
}

/** The first EC2NodeClass of the fixture (`default`). */
export const nodeClass = (f: Facts): EC2NodeClass =>
  f.kube.nodeClasses.ok ? f.kube.nodeClasses.value[0]! : assert.fail('fixture')

/** The first NodePool of the fixture (`default`). */
export const nodePool = (f: Facts): NodePool =>
  f.kube.nodePools.ok ? f.kube.nodePools.value[0]! : assert.fail('fixture')

/** The default EC2NodeClass selects an on-demand capacity reservation (Karpenter 1.3+). */
export const usesReservations = (f: Facts) => {
  nodeClass(f).spec.capacityReservationSelectorTerms = [{ id: 'cr-0123456789abcdef0' }]
}

// ---- the controller on EKS Pod Identity instead of IRSA (pod-identity) ----

/** A trust policy that lets the Pod Identity agent perform `actions`. */
export const podTrust = (actions: string[] = ['sts:AssumeRole', 'sts:TagSession']): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { Service: 'pods.eks.amazonaws.com' }, Action: actions }],
})

/** The healthy install switched from IRSA to Pod Identity. */
export function podIdentityFacts(mutate?: (f: Facts) => void): Facts {
  return healthyFacts((f) => {
    f.iam.controllerIdentity = 'pod-identity'
    if (f.kube.serviceAccount.ok && f.kube.serviceAccount.value)
      f.kube.serviceAccount.value.metadata.annotations = {}
    if (f.kube.release.ok && f.kube.release.value) delete f.kube.release.value.renderedServiceAccount
    f.eks.podIdentityAssociations = ok([
      {
        associationId: 'a-1234567890abcdef0',
        namespace: 'kube-system',
        serviceAccount: 'karpenter',
        roleArn: CONTROLLER_ROLE_ARN,
      },
    ])
    f.eks.addons = ok(['vpc-cni', 'coredns', 'kube-proxy', 'eks-pod-identity-agent'])
    const role = f.iam.roles[CONTROLLER_ROLE]
    if (role?.ok && role.value) role.value.role.trust = podTrust()
    mutate?.(f)
  })
}

/** Several fixture edits, applied in order. */
export const both =
  (...fns: ((f: Facts) => void)[]) =>
  (f: Facts) =>
    fns.forEach((fn) => fn(f))

// ---- the VPC CNI's own role (aws-node) ----

export const CNI_ROLE = 'AmazonEKSVPCCNIRole-demo'
export const CNI_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/${CNI_ROLE}`

/** aws-node's own role, read as the collector reads it: AmazonEKS_CNI_Policy attached unless `withCni` is false. */
export const cniRole = (withCni = true): RoleFacts => {
  const r = nodeRole(CNI_ROLE)
  r.attached = ok(
    withCni
      ? [
          {
            arn: 'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy',
            name: 'AmazonEKS_CNI_Policy',
            document: null,
          },
        ]
      : [],
  )
  return r
}

/** kube-system/aws-node annotated for IRSA with `arn`, and that role (when given) read. */
export const awsNodeIrsa =
  (arn: string = CNI_ROLE_ARN, role: RoleFacts | null | undefined = cniRole()) =>
  (f: Facts) => {
    f.kube.awsNodeServiceAccount = ok({
      metadata: {
        name: 'aws-node',
        namespace: 'kube-system',
        annotations: { 'eks.amazonaws.com/role-arn': arn },
      },
    })
    if (role !== undefined) f.iam.roles[arn.slice(arn.lastIndexOf('/') + 1)] = ok(role)
  }
