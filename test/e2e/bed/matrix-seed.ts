// The install matrix (issue 35, B): each tool's default Karpenter install, seeded on one bed that is
// reset between rows. Every row is a healthy install as that tool leaves it; doctor must find nothing.
//
// - the getting-started CloudFormation template of each 1.x minor (fixtures/policies/) with the guide's
//   helm values (adopted-seed.ts, IRSA through eksctl's iamserviceaccount stack). The chart is the
//   fixture's 1.14.1 restamped with the template's version (Chart.yaml version/appVersion, image tag;
//   what doctor judges by is the release's version, the templates rendered are 1.14.1's); 1.0.x is the
//   real 1.0.14 chart (webhooks on).
// - terraform-aws-eks `modules/karpenter` v20 (`enable_irsa`, `enable_v1_permissions`) and v21 (Pod
//   Identity) with the module's own defaults and policy.tf (terraform-seed.ts, terraform-module-policy.ts)
//   and the helm values of the module's `examples/karpenter`.
// - eksctl's `karpenter:` block (pkg/cfn/builder/karpenter.go, pkg/actions/karpenter/create.go,
//   pkg/karpenter/karpenter.go of eksctl-io/eksctl): stack `eksctl-<c>-karpenter` (node role
//   `eksctl-KarpenterNodeRole-<c>`, its instance profile, the managed policy
//   `eksctl-KarpenterControllerPolicy-<c>`: one statement on `*`), the IRSA role
//   `eksctl-<c>-iamservice-role` in its iamserviceaccount stack, eksctl's ServiceAccount
//   (`createServiceAccount: false`, the default), aws-auth, the chart in namespace `karpenter` with
//   eksctl's values (`settings.interruptionQueueName`, which chart v1 does not read: no queue, as
//   `withSpotInterruptionQueue` defaults to false), and the EC2NodeClass of eksctl's docs.
// - karpctl's own `install`.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CreateTagsCommand } from '@aws-sdk/client-ec2'
import { CreateAddonCommand } from '@aws-sdk/client-eks'
import type { Bed } from './bed.js'
import {
  eksctlIrsaTemplate,
  guideEC2NodeClass,
  irsaStackName,
  seedAdoptedInstall,
  seedGuideCluster,
  seedGuideKubernetes,
} from './adopted-seed.js'
import { deployStack, type Template } from './cloudformation.js'
import { ACCOUNT_ID } from './constants.js'
import { helm } from './kube-seed.js'
import { karpenterChartDir, karpenterFixtures } from './paths.js'
import { awsClients, type Network } from './seed.js'
import { seedTerraformAws, type TerraformModuleShape } from './terraform-seed.js'
import { seedBareCluster } from './install-seed.js'

/** What a row's seed leaves: the network (for the played controller) and what the row asserts on. */
export interface MatrixInstall {
  net: Network
  /** the release's namespace */
  namespace: string
}

/** The last patch of each 1.x minor in fixtures/karpenter/policies/, oldest first. */
export const GETTING_STARTED_VERSIONS = [
  '1.0.14',
  '1.1.10',
  '1.2.8',
  '1.3.8',
  '1.4.4',
  '1.5.8',
  '1.6.8',
  '1.7.6',
  '1.8.8',
  '1.9.2',
  '1.10.2',
  '1.11.3',
  '1.12.2',
  '1.13.1',
  '1.14.1',
] as const

/** The 1.14.1 chart stamped as `version` (Chart.yaml and the image tag, digest dropped). */
export function restampedChart(tmpDir: string, version: string): string {
  if (version === '1.14.1') return karpenterChartDir('1.14.1')
  if (version.startsWith('1.0.')) return karpenterChartDir('1.0.14')
  const dir = join(mkdtempSync(join(tmpDir, `chart-${version}-`)), 'karpenter')
  cpSync(karpenterChartDir('1.14.1'), dir, { recursive: true })
  const chart = join(dir, 'Chart.yaml')
  writeFileSync(
    chart,
    readFileSync(chart, 'utf8')
      .replace(/^version: 1\.14\.1$/m, `version: ${version}`)
      .replace(/^appVersion: 1\.14\.1$/m, `appVersion: ${version}`),
  )
  const values = join(dir, 'values.yaml')
  writeFileSync(
    values,
    readFileSync(values, 'utf8')
      .replace(/^(\s+)tag: 1\.14\.1$/gm, `$1tag: ${version}`)
      .replace(/^(\s+)digest: sha256:[0-9a-f]+$/gm, '$1digest: ""'),
  )
  return dir
}

/**
 * The newest Kubernetes each Karpenter minor supports (karpenter.sh compatibility matrix, as
 * src/checks/lib/compat.ts has it): what EKS says the row's cluster runs, as the guide of that version
 * would have made it (the API server itself is the bed's 1.34).
 */
export function kubernetesFor(karpenter: string): string {
  const minor = Number(karpenter.split('.')[1])
  if (minor <= 1) return '1.31'
  if (minor <= 4) return '1.32'
  if (minor <= 6) return '1.33'
  return '1.34'
}

/** The getting-started install of `version`: its template, the guide's helm values, that version's chart. */
export async function seedGettingStartedOf(bed: Bed, version: string): Promise<MatrixInstall> {
  const s = await seedAdoptedInstall(bed, {
    kubernetesVersion: kubernetesFor(version),
    templatePath: join(karpenterFixtures(), 'policies', `cloudformation-v${version}.yaml`),
    chartDir: restampedChart(bed.tmpDir, version),
    crds: version.startsWith('1.0.') ? '1.0.14' : '1.14.1',
  })
  return { net: s.net, namespace: s.helmRelease.namespace }
}

/** terraform-aws-eks `modules/karpenter` defaults of each major, as `examples/karpenter` configures it. */
export const TERRAFORM_MODULE_DEFAULTS: Record<20 | 21, TerraformModuleShape> = {
  // v20.37.2: enable_irsa = true and enable_v1_permissions = true (Karpenter 1.x), the rest default:
  // four rules, node role name-prefixed, ECR read-only, pod identity trust beside IRSA.
  20: {
    rules: {
      HealthEvent: 'HealthEvent',
      SpotInterrupt: 'SpotInterrupt',
      InstanceRebalance: 'InstanceRebalance',
      InstanceStateChange: 'InstanceStateChange',
    },
    irsa: true,
    nodeRolePrefixed: true,
    nodePolicies: [
      'AmazonEKSWorkerNodePolicy',
      'AmazonEC2ContainerRegistryReadOnly',
      'AmazonEKS_CNI_Policy',
      'AmazonSSMManagedInstanceCore',
    ],
    policy: 20,
  },
  // v21.19.0: Pod Identity only (and its association), five rules (CRInterruption), ECR pull-only.
  21: {
    rules: {
      HealthEvent: 'HealthEvent',
      SpotInterrupt: 'SpotInterrupt',
      InstanceRebalance: 'InstanceRebalance',
      InstanceStateChange: 'InstanceStateChange',
      CapacityReservation: 'CRInterruption',
    },
    irsa: false,
    nodeRolePrefixed: true,
    nodePolicies: [
      'AmazonEKSWorkerNodePolicy',
      'AmazonEC2ContainerRegistryPullOnly',
      'AmazonEKS_CNI_Policy',
      'AmazonSSMManagedInstanceCore',
    ],
    policy: 21,
  },
}

/**
 * The module's resources with its defaults; the node role joins by access entry (moto has none: not in
 * aws-auth either); the example's helm values (clusterName, clusterEndpoint, interruptionQueue; v20 the
 * IRSA annotation; v21 the Pod Identity association, made by the module, and the example's
 * `eks-pod-identity-agent` add-on: bed/moto_launcher.py gives moto both APIs).
 */
export async function seedTerraformModule(bed: Bed, major: 20 | 21): Promise<MatrixInstall> {
  // examples/karpenter pins chart 1.1.1 (v20; its cluster_version 1.33 is beyond what 1.1 supports, so
  // the cluster here is 1.31) and 1.6.0 on kubernetes_version 1.33 (v21): the last patch of each minor.
  const karpenter = major === 20 ? '1.1.10' : '1.6.8'
  const cluster = await seedGuideCluster(bed, { kubernetesVersion: kubernetesFor(karpenter) })
  const made = await seedTerraformAws(bed, cluster, TERRAFORM_MODULE_DEFAULTS[major])
  // examples/karpenter's `module "eks"` addons: eks-pod-identity-agent (before_compute), for v21's
  // association; v20's example judged here is the IRSA one.
  if (major === 21) {
    await awsClients({ awsEndpoint: bed.awsEndpoint, region: cluster.ctx.region }).eks.send(
      new CreateAddonCommand({ clusterName: cluster.ctx.clusterName, addonName: 'eks-pod-identity-agent' }),
    )
  }
  const cn = cluster.ctx.clusterName
  const set = (kv: string) => ['--set', kv]
  const r = await seedGuideKubernetes(bed, cluster, {
    nodeRoleArn: made.nodeRoleArn,
    nodeRoleInAwsAuth: false,
    helmArgs: [
      'upgrade',
      '--install',
      'karpenter',
      restampedChart(bed.tmpDir, karpenter),
      '--namespace',
      'kube-system',
      ...set(`settings.clusterName=${cn}`),
      ...set(`settings.clusterEndpoint=${cluster.endpoint}`),
      ...set(`settings.interruptionQueue=${made.queueName}`),
      ...set('dnsPolicy=Default'),
      ...(major === 21 ? set('settings.enableZonalShift=true') : []),
      ...(major === 20
        ? set(`serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=${made.controllerRoleArn}`)
        : []),
    ],
    nodeClass: guideEC2NodeClass(cn, made.nodeRoleName),
  })
  return { net: made.net, namespace: r.namespace }
}

/** eksctl's stack `eksctl-<c>-karpenter` (withSpotInterruptionQueue false: no queue, no rules). */
function eksctlKarpenterTemplate(cn: string): Template {
  const actions = [
    'ec2:CreateFleet',
    'ec2:CreateLaunchTemplate',
    'ec2:CreateTags',
    'ec2:DescribeAvailabilityZones',
    'ec2:DescribeInstanceTypeOfferings',
    'ec2:DescribeInstanceTypes',
    'ec2:DescribeInstances',
    'ec2:DescribeLaunchTemplates',
    'ec2:DescribeSecurityGroups',
    'ec2:DescribeSubnets',
    'ec2:DeleteLaunchTemplate',
    'ec2:RunInstances',
    'ec2:TerminateInstances',
    'ec2:DescribeImages',
    'ec2:DescribeSpotPriceHistory',
    'ec2:DescribeCapacityReservations',
    'iam:PassRole',
    'iam:CreateServiceLinkedRole',
    'iam:GetInstanceProfile',
    'iam:CreateInstanceProfile',
    'iam:DeleteInstanceProfile',
    'iam:TagInstanceProfile',
    'iam:AddRoleToInstanceProfile',
    'iam:RemoveRoleFromInstanceProfile',
    'iam:ListInstanceProfiles',
    'iam:ListInstanceProfilesForRole',
    'eks:DescribeCluster',
    'ssm:GetParameter',
    'pricing:GetProducts',
  ]
  return {
    AWSTemplateFormatVersion: '2010-09-09',
    Description: 'Karpenter Stack [created and managed by eksctl]',
    Resources: {
      KarpenterNodeRole: {
        Type: 'AWS::IAM::Role',
        Properties: {
          RoleName: `eksctl-KarpenterNodeRole-${cn}`,
          Path: '/',
          AssumeRolePolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              { Effect: 'Allow', Action: ['sts:AssumeRole'], Principal: { Service: ['ec2.amazonaws.com'] } },
            ],
          },
          ManagedPolicyArns: [
            'AmazonEC2ContainerRegistryPullOnly',
            'AmazonEKSWorkerNodePolicy',
            'AmazonEKS_CNI_Policy',
            'AmazonSSMManagedInstanceCore',
          ].map((n) => `arn:aws:iam::aws:policy/${n}`),
        },
      },
      KarpenterNodeInstanceProfile: {
        Type: 'AWS::IAM::InstanceProfile',
        Properties: {
          InstanceProfileName: `eksctl-KarpenterNodeInstanceProfile-${cn}`,
          Path: '/',
          Roles: [{ Ref: 'KarpenterNodeRole' }],
        },
      },
      KarpenterControllerPolicy: {
        Type: 'AWS::IAM::ManagedPolicy',
        Properties: {
          ManagedPolicyName: `eksctl-KarpenterControllerPolicy-${cn}`,
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [{ Effect: 'Allow', Resource: '*', Action: actions }],
          },
        },
      },
    },
  }
}

/** eksctl's `karpenter:` block with its defaults, on the guide's cluster. */
export async function seedEksctlKarpenter(bed: Bed): Promise<MatrixInstall> {
  // eksctl's docs (userdocs/src/usage/eksctl-karpenter.md): karpenter.version '1.2.1' on Kubernetes 1.32.
  const karpenter = '1.2.8'
  const cluster = await seedGuideCluster(bed, { kubernetesVersion: kubernetesFor(karpenter) })
  const { ctx, eksctlTags } = cluster
  const cn = ctx.clusterName
  const aws = awsClients({ awsEndpoint: bed.awsEndpoint, region: ctx.region })
  const stack = await deployStack(bed, aws, {
    stackName: `eksctl-${cn}-karpenter`,
    template: eksctlKarpenterTemplate(cn),
    tags: { ...eksctlTags, 'alpha.eksctl.io/karpenter-name': `eksctl-${cn}-karpenter` },
  })
  // ensureSubnetsHaveTags: kubernetes.io/cluster/<c> = "" on the cluster's subnets.
  await aws.ec2.send(
    new CreateTagsCommand({
      Resources: cluster.net.subnetIds,
      Tags: [{ Key: `kubernetes.io/cluster/${cn}`, Value: '' }],
    }),
  )
  const namespace = 'karpenter'
  const roleName = `eksctl-${cn}-iamservice-role`
  await deployStack(bed, aws, {
    stackName: irsaStackName(cn, namespace, 'karpenter'),
    template: eksctlIrsaTemplate({
      roleName,
      oidcProviderArn: cluster.oidcProviderArn,
      oidcIssuer: cluster.oidcIssuer,
      namespace,
      serviceAccount: 'karpenter',
      policyArns: [stack.physical.KarpenterControllerPolicy!],
    }),
    tags: {
      ...eksctlTags,
      'alpha.eksctl.io/iamserviceaccount-name': `${namespace}/karpenter`,
    },
  })
  const roleArn = `arn:aws:iam::${ACCOUNT_ID}:role/${roleName}`
  // createServiceAccount: false — eksctl makes the ServiceAccount (annotated) before the chart.
  await bed.kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } })
  await bed.kube.apply({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name: 'karpenter',
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'eksctl' },
      annotations: { 'eks.amazonaws.com/role-arn': roleArn },
    },
  })
  const profile = `eksctl-KarpenterNodeInstanceProfile-${cn}`
  const set = (kv: string) => ['--set', kv]
  const nodeRoleName = stack.physical.KarpenterNodeRole!
  await seedGuideKubernetes(bed, cluster, {
    nodeRoleArn: `arn:aws:iam::${ACCOUNT_ID}:role/${nodeRoleName}`,
    namespace,
    helmArgs: [
      'upgrade',
      '--install',
      'karpenter',
      restampedChart(bed.tmpDir, karpenter),
      '--namespace',
      namespace,
      ...set(`clusterName=${cn}`),
      ...set(`clusterEndpoint=${cluster.endpoint}`),
      ...set(`aws.defaultInstanceProfile=${profile}`),
      ...set(`settings.defaultInstanceProfile=${profile}`),
      ...set(`settings.clusterName=${cn}`),
      ...set(`settings.clusterEndpoint=${cluster.endpoint}`),
      ...set(`settings.interruptionQueueName=${cn}`),
      ...set('serviceAccount.create=false'),
      ...set('serviceAccount.name=karpenter'),
      ...set(`serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=${roleArn}`),
    ],
    nodeClass: guideEC2NodeClass(cn, nodeRoleName),
  })
  return { net: cluster.net, namespace }
}

/**
 * A bare eksctl cluster, for karpctl's own install to make everything. In CONFIG_MAP mode: on an
 * access-entry cluster install makes an access entry, which moto cannot (that path is proven with nock).
 */
export async function seedBareForKarpctl(bed: Bed): Promise<MatrixInstall> {
  const c = await seedBareCluster(bed, { authenticationMode: 'CONFIG_MAP' })
  return { net: c.net, namespace: 'kube-system' }
}

/** Back to an empty account and cluster: releases, Karpenter's objects and CRDs, aws-auth, nodes, moto. */
export async function resetBed(bed: Bed, opts: { keepCrds?: boolean } = {}): Promise<void> {
  for (const ns of ['kube-system', 'karpenter']) {
    await helm(bed, ['uninstall', 'karpenter', '--namespace', ns, '--ignore-not-found', '--wait'])
  }
  for (const path of ['/apis/karpenter.sh/v1/nodepools', '/apis/karpenter.k8s.aws/v1/ec2nodeclasses']) {
    const items = await bed.kube.list(path).catch(() => [])
    for (const o of items) {
      const p = `${path}/${o.metadata.name}`
      if (o.metadata.finalizers?.length) await bed.kube.mergePatch(p, { metadata: { finalizers: null } })
      await bed.kube.delete(p)
    }
  }
  // Kept when every scenario installs the same chart (its CRDs are the chart's own).
  const crds = opts.keepCrds
    ? []
    : await bed.kube.list('/apis/apiextensions.k8s.io/v1/customresourcedefinitions')
  const ours = crds
    .map((c) => c.metadata.name as string)
    .filter((n) => /\.(karpenter\.sh|karpenter\.k8s\.aws|autoscaling\.x-k8s\.io)$/.test(n))
  for (const n of ours) await bed.kube.delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}`)
  // 300 s: under load (the field corpus beside the unit suite) the 1.14.1 CRDs a printed upgrade made
  // outlived 120 s
  for (const n of ours) {
    const deadline = Date.now() + 300_000
    while (await bed.kube.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}`)) {
      if (Date.now() > deadline) throw new Error(`CRD ${n} still there after 300 s`)
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  await bed.kube.delete('/api/v1/namespaces/kube-system/configmaps/aws-auth')
  // eksctl's ServiceAccount (not the chart's) and karpctl's lock outlive the release.
  await bed.kube.delete('/api/v1/namespaces/karpenter/serviceaccounts/karpenter')
  for (const ns of ['kube-system', 'karpenter']) {
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`
    for (const l of await bed.kube.list(leases))
      if (String(l.metadata.name).startsWith('karpctl')) await bed.kube.delete(`${leases}/${l.metadata.name}`)
  }
  for (const n of await bed.kube.list('/api/v1/nodes'))
    await bed.kube.delete(`/api/v1/nodes/${n.metadata.name}`)
  await bed.resetAws()
}
