// A healthy, getting-started-style Karpenter 1.14.1 install on cluster `demo` (IRSA, aws-auth),
// as facts. Tests break one thing at a time with `healthyFacts((f) => { ... })`.
import { renderedInstall } from '../../src/facts/rendered-install.js'
import type {
  EC2NodeClass,
  Facts,
  NodePool,
  PermissionEvaluation,
  Read,
  RoleFacts,
  RenderedBy,
} from '../../src/facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../src/policy/types.js'
import { controllerPolicyDocuments, INTERRUPTION_RULES } from '../../src/desired/controller-policy.js'

export const ACCOUNT = '123456789012'
export const REGION = 'us-west-2'
export const CLUSTER = 'demo'
export const ISSUER = 'oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE'
export const OIDC_ARN = `arn:aws:iam::${ACCOUNT}:oidc-provider/${ISSUER}`
export const NODE_ROLE = `KarpenterNodeRole-${CLUSTER}`
export const NODE_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/${NODE_ROLE}`
export const CONTROLLER_ROLE = `KarpenterControllerRole-${CLUSTER}`
export const CONTROLLER_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/${CONTROLLER_ROLE}`
export const QUEUE_ARN = `arn:aws:sqs:${REGION}:${ACCOUNT}:${CLUSTER}`
export const CLUSTER_SG = 'sg-0c1a5e1c1a5e1c1a5'
export const NODE_SG = 'sg-0a0de0a0de0a0de0a'
export const VPC = 'vpc-0f00d0f00d0f00d00'

export const ok = <T>(value: T): Read<T> => ({ ok: true, value })
export const failed = <T>(
  read: string,
  code = 'AccessDenied',
  kind: 'denied' | 'throttled' | 'unsupported' = 'denied',
): Read<T> => ({
  ok: false,
  error: { code, kind, message: `${code} for ${read}`, read },
})

export function irsaTrust(ns = 'kube-system', sa = 'karpenter'): PolicyDocument {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Federated: OIDC_ARN },
        Action: 'sts:AssumeRoleWithWebIdentity',
        Condition: {
          StringEquals: {
            [`${ISSUER}:sub`]: `system:serviceaccount:${ns}:${sa}`,
            [`${ISSUER}:aud`]: 'sts.amazonaws.com',
          },
        },
      },
    ],
  }
}

const managed = (name: string) => ({
  arn: `arn:aws:iam::aws:policy/${name}`,
  name,
  document: { Version: '2012-10-17', Statement: [] },
})

export function nodeRole(name = NODE_ROLE): RoleFacts {
  return {
    role: {
      name,
      arn: `arn:aws:iam::${ACCOUNT}:role/${name}`,
      path: '/',
      trust: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      },
      tags: {},
    },
    attached: ok([
      managed('AmazonEKS_CNI_Policy'),
      managed('AmazonEKSWorkerNodePolicy'),
      managed('AmazonEC2ContainerRegistryPullOnly'),
      managed('AmazonSSMManagedInstanceCore'),
    ]),
    inline: ok([]),
  }
}

export function controllerRole(): RoleFacts {
  const docs = controllerPolicyDocuments({
    partition: 'aws',
    region: REGION,
    accountId: ACCOUNT,
    clusterName: CLUSTER,
    nodeRoleArns: [NODE_ROLE_ARN],
    queueArn: QUEUE_ARN,
  })
  return {
    role: { name: CONTROLLER_ROLE, arn: CONTROLLER_ROLE_ARN, path: '/', trust: irsaTrust(), tags: {} },
    attached: ok(
      docs.map((d) => ({
        arn: `arn:aws:iam::${ACCOUNT}:policy/${d.name}`,
        name: d.name,
        document: d.document,
      })),
    ),
    inline: ok([]),
  }
}

const subnet = (id: string, az: string) => ({
  id,
  vpcId: VPC,
  availabilityZone: az,
  cidr: '10.0.0.0/19',
  availableIps: 8000,
  tags: { 'karpenter.sh/discovery': CLUSTER },
})

/** The getting-started NodePool `default` (on-demand and spot), Ready. */
export function healthyNodePool(): NodePool {
  return {
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand', 'spot'] },
          ],
        },
      },
      limits: { cpu: '1000' },
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }
}

/** The getting-started EC2NodeClass `default`: node role and discovery-tag selectors, Ready. */
export function healthyNodeClass(): EC2NodeClass {
  return {
    metadata: { name: 'default' },
    spec: {
      role: NODE_ROLE,
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }
}

/** The interruption queue policy of the getting-started template (without its DenyHTTP statement). */
export function queuePolicy(): PolicyDocument {
  return {
    Version: '2012-10-17',
    Id: 'EC2InterruptionPolicy',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Service: ['events.amazonaws.com', 'sqs.amazonaws.com'] },
        Action: 'sqs:SendMessage',
        Resource: QUEUE_ARN,
      },
    ],
  }
}

/** What IAM's simulator answers for `iam:PassRole` of a node role to EC2 (allowed by default). */
export function passRoleEvaluation(over: Partial<PermissionEvaluation> = {}): PermissionEvaluation {
  return {
    action: 'iam:PassRole',
    resource: NODE_ROLE_ARN,
    context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
    decision: 'allowed',
    method: 'simulator',
    matchedStatements: ['AllowPassingInstanceRole'],
    ...over,
  }
}

export function healthyFacts(mutate?: (f: Facts) => void): Facts {
  const f: Facts = {
    schema: 'karpctl.facts/v1',
    meta: {
      clusterName: CLUSTER,
      region: REGION,
      accountId: ACCOUNT,
      partition: 'aws',
      collectedAt: '2026-11-29T12:00:00.000Z',
      kubeContext: 'demo',
      kubeServer: 'https://EXAMPLE.gr7.us-west-2.eks.amazonaws.com',
      karpctlVersion: '0.1.0',
      notes: [],
    },
    eks: {
      cluster: ok({
        name: CLUSTER,
        arn: `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/${CLUSTER}`,
        version: '1.34',
        endpoint: 'https://EXAMPLE.gr7.us-west-2.eks.amazonaws.com',
        status: 'ACTIVE',
        oidcIssuer: `https://${ISSUER}`,
        vpcId: VPC,
        subnetIds: ['subnet-0a', 'subnet-0b', 'subnet-0c'],
        securityGroupIds: [],
        clusterSecurityGroupId: CLUSTER_SG,
        authenticationMode: 'CONFIG_MAP',
        tags: {},
      }),
      accessEntries: ok([]),
      podIdentityAssociations: ok([]),
      addons: ok(['vpc-cni', 'coredns', 'kube-proxy']),
    },
    iam: {
      oidcProviders: ok([{ arn: OIDC_ARN, url: ISSUER, clientIds: ['sts.amazonaws.com'] }]),
      roles: { [CONTROLLER_ROLE]: ok(controllerRole()), [NODE_ROLE]: ok(nodeRole()) },
      controllerRoleName: CONTROLLER_ROLE,
      controllerIdentity: 'irsa',
      instanceProfiles: {},
      spotServiceLinkedRole: ok({
        name: 'AWSServiceRoleForEC2Spot',
        arn: `arn:aws:iam::${ACCOUNT}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`,
        path: '/aws-service-role/spot.amazonaws.com/',
        trust: { Statement: [] },
        tags: {},
      }),
      passRole: {
        [NODE_ROLE_ARN]: ok(passRoleEvaluation()),
      },
    },
    ec2: {
      subnetsByNodeClass: {
        default: ok([
          subnet('subnet-0a', 'us-west-2a'),
          subnet('subnet-0b', 'us-west-2b'),
          subnet('subnet-0c', 'us-west-2c'),
        ]),
      },
      securityGroupsByNodeClass: {
        default: ok([
          {
            id: NODE_SG,
            name: 'demo-node',
            vpcId: VPC,
            tags: { 'karpenter.sh/discovery': CLUSTER },
            ingress: [
              { protocol: 'tcp', fromPort: 8443, toPort: 8443, cidrs: [], sourceGroupIds: [CLUSTER_SG] },
            ],
          },
        ]),
      },
      clusterSecurityGroup: ok({
        id: CLUSTER_SG,
        name: 'eks-cluster-sg-demo',
        vpcId: VPC,
        tags: {},
        ingress: [],
      }),
    },
    sqs: {
      queue: ok({
        name: CLUSTER,
        url: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${CLUSTER}`,
        arn: QUEUE_ARN,
        messageRetentionSeconds: 300,
        sseEnabled: true,
        policy: queuePolicy(),
      }),
    },
    kms: { keys: {} },
    events: {
      rules: ok(
        INTERRUPTION_RULES.map(({ key: name, source, detailType: detail }) => ({
          name: `Karpenter-demo-${name}`,
          arn: `arn:aws:events:${REGION}:${ACCOUNT}:rule/Karpenter-demo-${name}`,
          state: 'ENABLED',
          eventPattern: { source: [source], 'detail-type': [detail] },
          targetArns: [QUEUE_ARN],
          targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: QUEUE_ARN }],
        })),
      ),
    },
    kube: {
      release: ok({
        name: 'karpenter',
        namespace: 'kube-system',
        revision: 1,
        status: 'deployed',
        chartName: 'karpenter',
        chartVersion: '1.14.1',
        appVersion: '1.14.1',
        values: {
          settings: { clusterName: CLUSTER, interruptionQueue: CLUSTER },
          serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN } },
        },
        computedValues: {
          replicas: 2,
          webhook: { enabled: false, port: 8443 },
          settings: { clusterName: CLUSTER, interruptionQueue: CLUSTER },
          serviceAccount: {
            create: true,
            name: '',
            annotations: { 'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN },
          },
          tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
        },
        renderedServiceAccount: {
          name: 'karpenter',
          annotations: { 'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN },
        },
      }),
      serviceAccount: ok({
        metadata: {
          name: 'karpenter',
          namespace: 'kube-system',
          annotations: { 'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN },
        },
      }),
      deployment: ok({
        metadata: { name: 'karpenter', namespace: 'kube-system' },
        replicas: 2,
        availableReplicas: 2,
        readyReplicas: 2,
        conditions: [{ type: 'Available', status: 'True' }],
        serviceAccountName: 'karpenter',
        env: { CLUSTER_NAME: CLUSTER, INTERRUPTION_QUEUE: CLUSTER },
        image: 'public.ecr.aws/karpenter/controller:1.14.1',
      }),
      pods: ok([
        {
          metadata: { name: 'karpenter-abc', namespace: 'kube-system' },
          nodeName: 'ip-10-0-1-1',
          phase: 'Running',
          containerStatuses: [{ name: 'controller', restartCount: 0, ready: true }],
        },
        {
          metadata: { name: 'karpenter-def', namespace: 'kube-system' },
          nodeName: 'ip-10-0-2-1',
          phase: 'Running',
          containerStatuses: [{ name: 'controller', restartCount: 0, ready: true }],
        },
      ]),
      nodes: ok([
        {
          name: 'ip-10-0-1-1',
          labels: { 'eks.amazonaws.com/nodegroup': 'system' },
          taints: [],
          ready: true,
          karpenter: false,
          kubeletVersion: 'v1.34.1',
        },
        {
          name: 'ip-10-0-2-1',
          labels: { 'eks.amazonaws.com/nodegroup': 'system' },
          taints: [],
          ready: true,
          karpenter: false,
          kubeletVersion: 'v1.34.1',
        },
      ]),
      nodePools: ok([healthyNodePool()]),
      nodeClasses: ok([healthyNodeClass()]),
      crds: ok(
        ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws'].map(
          (name) => ({
            name,
            group: name.slice(name.indexOf('.') + 1),
            servedVersions: ['v1'],
            storageVersion: 'v1',
            labels: { 'app.kubernetes.io/managed-by': 'Helm' },
            annotations: { 'meta.helm.sh/release-name': 'karpenter' },
          }),
        ),
      ),
      awsAuth: ok([
        {
          rolearn: NODE_ROLE_ARN,
          username: 'system:node:{{EC2PrivateDNSName}}',
          groups: ['system:bootstrappers', 'system:nodes'],
        },
      ]),
      webhooks: ok([]),
      legacy: ok({ provisioners: [], awsNodeTemplates: [] }),
      serverVersion: ok('v1.34.1'),
      clusterAutoscalers: ok([]),
    },
    local: { helmRegistry: ok(null) },
  }
  mutate?.(f)
  return f
}

/**
 * Key policy statements that let `principals` use a KMS key through EC2 for an encrypted launch (what
 * ebs-kms-key's fix writes, with Resource `*` as key policies usually say).
 */
export function kmsUseStatements(principals: string | string[], region = REGION): PolicyStatement[] {
  return [
    {
      Sid: 'KarpenterEbsEncryption',
      Effect: 'Allow',
      Principal: { AWS: principals },
      Action: ['kms:GenerateDataKeyWithoutPlaintext', 'kms:Decrypt'],
      Resource: '*',
      Condition: { StringEquals: { 'kms:ViaService': `ec2.${region}.amazonaws.com` } },
    },
    {
      Sid: 'KarpenterEbsGrants',
      Effect: 'Allow',
      Principal: { AWS: principals },
      Action: 'kms:CreateGrant',
      Resource: '*',
      Condition: { Bool: { 'kms:GrantIsForAWSResource': 'true' } },
    },
  ]
}

/** The Deployment the cluster-autoscaler chart makes, discovering the managed node groups of `cluster`. */
export function clusterAutoscalerDeployment(replicas: number, cluster = CLUSTER) {
  const labels = {
    'app.kubernetes.io/name': 'aws-cluster-autoscaler',
    'app.kubernetes.io/instance': 'cluster-autoscaler',
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'cluster-autoscaler-aws-cluster-autoscaler', namespace: 'kube-system', labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'aws-cluster-autoscaler',
              image: 'registry.k8s.io/autoscaling/cluster-autoscaler:v1.34.0',
              command: [
                './cluster-autoscaler',
                '--cloud-provider=aws',
                '--namespace=kube-system',
                `--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/${cluster}`,
              ],
            },
          ],
        },
      },
    },
  }
}

/**
 * The healthy facts as Argo CD (or Flux, or `helm template | kubectl apply`) leaves them: no Helm
 * release, the install read back from the live Deployment and ServiceAccount as the collector does.
 */
export function withoutHelm(by: RenderedBy = { tool: 'argocd', name: 'karpenter' }) {
  return (f: Facts): void => {
    const d = f.kube.deployment.ok ? f.kube.deployment.value : null
    const sa = f.kube.serviceAccount.ok ? f.kube.serviceAccount.value : null
    f.kube.release = ok(null)
    f.kube.rendered = ok(d ? { ...renderedInstall(d, sa), renderedBy: by } : null)
  }
}
