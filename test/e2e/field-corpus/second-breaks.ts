// The field corpus's second breaks (issue 35, B) of the checks that had one: controller-ready,
// cluster-autoscaler, helm-registry-auth and karpenter-version. Each from a report found with the
// search tool (cited in `source`); each warns, as these findings do, and its printed lines run.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CreateNodegroupCommand, DescribeNodegroupCommand } from '@aws-sdk/client-eks'
import { clusterAutoscalerDeployment } from '../../helpers/facts.js'
import { helm, karpenterChartDir } from '../bed/index.js'
import { controllerPod, deletePods, type Ctx, type Scenario } from './scenario.js'

const CAS = '/apis/apps/v1/namespaces/kube-system/deployments/cluster-autoscaler-aws-cluster-autoscaler'

/** A managed node group as terraform-aws-eks's eks-managed-node-group makes it by default (1..3, 1). */
async function nodegroup(c: Ctx, name: string, desiredSize = 1) {
  await c.aws.eks.send(
    new CreateNodegroupCommand({
      clusterName: c.seed.clusterName,
      nodegroupName: name,
      nodeRole: c.seed.nodeRoleArn,
      subnets: c.seed.subnetIds,
      scalingConfig: { minSize: 1, maxSize: 3, desiredSize },
    }),
  )
  const d = await c.aws.eks.send(
    new DescribeNodegroupCommand({ clusterName: c.seed.clusterName, nodegroupName: name }),
  )
  return d.nodegroup!.resources!.autoScalingGroups![0]!.name!
}

/** The Docker config the bed gives karpctl, helm and the printed lines ($DOCKER_CONFIG). */
const dockerConfig = (c: Ctx) => c.bed.env.DOCKER_CONFIG!

/**
 * The controller on EKS Fargate, as the guides that give it a Fargate profile make it: no node group
 * for it, one Fargate node per controller pod (tainted `eks.amazonaws.com/compute-type=fargate`).
 */
async function onFargate(c: Ctx) {
  const nodes = (await c.bed.kube.list('/api/v1/nodes')) as { metadata: { name: string } }[]
  for (const n of nodes) await c.bed.kube.delete(`/api/v1/nodes/${n.metadata.name}`)
  for (const [i, zone] of ['us-west-2a', 'us-west-2b'].entries()) {
    const name = `fargate-ip-192-168-${96 + i * 32}-20.us-west-2.compute.internal`
    await c.bed.kube.apply({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'eks.amazonaws.com/compute-type': 'fargate',
          'kubernetes.io/hostname': name,
          'topology.kubernetes.io/zone': zone,
        },
      },
      spec: { taints: [{ key: 'eks.amazonaws.com/compute-type', value: 'fargate', effect: 'NoSchedule' }] },
    })
    await c.bed.kube.mergePatch(
      `/api/v1/nodes/${name}`,
      { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } },
      'status',
    )
    await controllerPod(c, `karpenter-fargate-${i}`, name)
  }
}

export const SECOND_BREAKS: Scenario[] = [
  {
    check: 'controller-ready',
    title:
      'healthy: the controller on EKS Fargate (a Fargate profile for its namespace), no node outside Karpenter for it',
    source:
      'aws/karpenter-provider-aws PR #1834 (the eksctl getting-started guide with a Fargate profile for Karpenter), #1812; aws-ia/terraform-aws-eks-blueprints PR #1187 (examples/karpenter-fargate)',
    shape: onFargate,
    cleanup: deletePods('karpenter-fargate-0', 'karpenter-fargate-1'),
    expect: /the controller runs on EKS Fargate \(fargate-ip-/,
  },
  {
    check: 'controller-ready',
    title:
      'one node outside Karpenter (a one-node bootstrap group) for the chart default of 2 replicas: one stays Pending',
    source:
      'aws/karpenter-provider-aws PR #4531 ("only one non-karpenter node … stuck with one dead Karpenter pod"), #6160 (the default anti-affinity, all replicas pending)',
    breakIt: async (c) => {
      // The seed's nodes belong to demo-ng: that group, at one node, as the bootstrap group it was.
      await nodegroup(c, 'demo-ng')
      const nodes = (await c.bed.kube.list('/api/v1/nodes')) as { metadata: { name: string } }[]
      for (const n of nodes.slice(1)) await c.bed.kube.delete(`/api/v1/nodes/${n.metadata.name}`)
    },
    status: 'warn',
    expect:
      /1 ready node not managed by Karpenter for 2 controller replicas \(one per node by anti-affinity\)/,
  },
  {
    check: 'cluster-autoscaler',
    title:
      "cluster-autoscaler given the node group's Auto Scaling group by --nodes=1:3:<ASG> beside Karpenter",
    source:
      'aws/karpenter-provider-aws#2543 (both running during a migration, on the default node groups); kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws README ("Manual configuration": --nodes=<min>:<max>:<ASG>)',
    breakIt: async (c) => {
      const asg = await nodegroup(c, 'system', 2)
      const cas = clusterAutoscalerDeployment(1, c.seed.clusterName)
      const container = cas.spec.template.spec.containers[0]!
      container.command = [...container.command.slice(0, 3), `--nodes=1:3:${asg}`]
      await c.bed.kube.create(cas as never)
    },
    status: 'warn',
    expect: /scales .* \(node group system\) while Karpenter provisions/,
    cleanup: async ({ bed }) => {
      await bed.kube.delete(CAS)
    },
  },
  {
    check: 'helm-registry-auth',
    title:
      "a stale `docker login public.ecr.aws` and no Helm registry login (Helm falls back to Docker's config)",
    source:
      'aws/karpenter-provider-aws PR #3020 (docker logout before helm upgrade, #2933), aws-samples/eks-workshop#1544 ("authorization token has expired"); helm pkg/registry/client.go (NewStoreWithFallbacks(store, dockerStore))',
    breakIt: async (c) => {
      mkdirSync(dockerConfig(c), { recursive: true })
      const auth = Buffer.from('AWS:eyJwYXlsb2FkIjoi').toString('base64')
      writeFileSync(
        join(dockerConfig(c), 'config.json'),
        JSON.stringify({ auths: { 'public.ecr.aws': { auth } } }),
      )
    },
    status: 'warn',
    expect: /docker\/config\.json stores credentials for public\.ecr\.aws, which Helm sends/,
    cleanup: async (c) => rmSync(dockerConfig(c), { recursive: true, force: true }),
  },
  {
    check: 'karpenter-version',
    title: 'a 1.0.x install with webhook.enabled=false (the TLS noise silenced): v1beta1 cannot convert',
    source:
      'fluxcd/kustomize-controller#1296 (Karpenter v1 webhook disabled, NodePool dry-run failed), aws/karpenter-provider-aws#7124, #7276 ("isn\'t configured for webhook conversion")',
    chart: '1.0.14',
    breakIt: async ({ bed }) => {
      await helm(bed, [
        'upgrade',
        'karpenter',
        karpenterChartDir('1.0.14'),
        '-n',
        'kube-system',
        '--reuse-values',
        '--set',
        'webhook.enabled=false',
      ])
    },
    status: 'warn',
    expect: /v1\.0\.x conversion line: webhooks are disabled, so v1beta1 objects cannot be converted/,
  },
]
