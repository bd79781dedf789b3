// An EKS cluster as it is before Karpenter: VPC, private subnets without discovery tags, cluster
// security group, the cluster itself, and a managed node group (its role in aws-auth, its nodes Ready).
// Plus the part of Karpenter's controller no binary plays here: reporting its objects Ready.
import {
  CreateRoleCommand,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
  ListRoleTagsCommand,
  ListRolesCommand,
  ListOpenIDConnectProvidersCommand,
} from '@aws-sdk/client-iam'
import { DeleteTagsCommand, DescribeSecurityGroupsCommand, DescribeSubnetsCommand } from '@aws-sdk/client-ec2'
import { ListQueuesCommand, GetQueueAttributesCommand, ListQueueTagsCommand } from '@aws-sdk/client-sqs'
import { ListRulesCommand, ListTargetsByRuleCommand } from '@aws-sdk/client-eventbridge'
import { startBed, type Bed } from './bed.js'
import { imageVersion } from './karpenter.js'
import type { KubeObject } from './kube-client.js'
import { ACCOUNT_ID, CLUSTER_NAME, DISCOVERY_TAG, REGION } from './constants.js'
import {
  awsAuthConfigMap,
  createNodegroupNodes,
  markDeploymentAvailable,
  markNodeClassReady,
  markNodePoolReady,
} from './kube-seed.js'
import { awsClients, createEksCluster, createNetwork, revokeWebhookIngress, type Network } from './seed.js'

export interface BareCluster {
  net: Network
  oidcIssuer: string
  nodegroupRoleArn: string
}

/** `kubernetesVersion`: what EKS says the cluster runs (the apiserver itself is the bed's). */
export async function seedBareCluster(
  bed: Bed,
  opts: { kubernetesVersion?: string; authenticationMode?: 'API_AND_CONFIG_MAP' | 'CONFIG_MAP' } = {},
): Promise<BareCluster> {
  const aws = awsClients(bed)
  const ctx = { clusterName: CLUSTER_NAME, region: REGION, accountId: ACCOUNT_ID, partition: 'aws' as const }
  const net = await createNetwork(aws, ctx)
  // Before Karpenter: nobody has tagged anything for discovery, nor opened 8443.
  await aws.ec2.send(
    new DeleteTagsCommand({
      Resources: [...net.subnetIds, net.nodeSecurityGroupId],
      Tags: [{ Key: DISCOVERY_TAG }],
    }),
  )
  await revokeWebhookIngress(aws, net)
  const cluster = await createEksCluster(aws, ctx, net, opts.kubernetesVersion, [], opts.authenticationMode)
  const ng = await aws.iam.send(
    new CreateRoleCommand({
      RoleName: `eksctl-${CLUSTER_NAME}-nodegroup-ng-NodeInstanceRole`,
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      }),
    }),
  )
  const nodegroupRoleArn = ng.Role!.Arn!
  await bed.kube.apply(awsAuthConfigMap([nodegroupRoleArn]))
  await createNodegroupNodes(bed.kube, { count: 2 })
  return { net, oidcIssuer: cluster.oidcIssuer, nodegroupRoleArn }
}

/**
 * Plays the Karpenter controller's part until stopped: the Deployment becomes available and the
 * default EC2NodeClass and NodePool report Ready, as soon as each appears. With `handOverAt` (a version
 * the bed runs for real, `startBed({ karpenter: true })`), it plays nothing once the Deployment's image
 * is that version: the real controller follows the Deployment from there (an upgrade's last steps).
 */
export function playController(
  bed: Bed,
  net: Network,
  namespace = 'kube-system',
  handOverAt?: string,
): () => Promise<void> {
  let stopped = false
  const done = new Set<string>()
  const loop = (async () => {
    while (!stopped) {
      try {
        // Keyed by uid: an object deleted and made again (a re-install after teardown) is new. The
        // Deployment also by generation: each rollout (a helm upgrade or rollback) completes, as the
        // Deployment controller would make it, so `helm --wait` and karpctl's waits see it done.
        const deploy = await bed.kube.get(`/apis/apps/v1/namespaces/${namespace}/deployments/karpenter`)
        if (handOverAt && deploy && imageVersion(deploy) === handOverAt) {
          await new Promise((r) => setTimeout(r, 250))
          continue
        }
        const rollout = deploy && `${deploy.metadata.uid}/${deploy.metadata.generation}`
        if (rollout && !done.has(rollout)) {
          await markDeploymentAvailable(bed.kube, namespace, 'karpenter')
          done.add(rollout)
        }
        // Every EC2NodeClass and NodePool (the install's and each tenant's) reports Ready once.
        const classes = await bed.kube.list('/apis/karpenter.k8s.aws/v1/ec2nodeclasses').catch(() => [])
        for (const nc of classes.filter((o) => !done.has(o.metadata.uid))) {
          await markNodeClassReady(bed.kube, nc.metadata.name, {
            subnets: net.subnetIds.map((id, i) => ({ id, zone: net.availabilityZones[i]! })),
            securityGroups: [{ id: net.clusterSecurityGroupId }],
          })
          done.add(nc.metadata.uid)
        }
        const pools = await bed.kube.list('/apis/karpenter.sh/v1/nodepools').catch(() => [])
        for (const np of pools.filter((o) => !done.has(o.metadata.uid))) {
          await markNodePoolReady(bed.kube, np.metadata.name)
          done.add(np.metadata.uid)
        }
        // A pod that needs a Karpenter node (karpctl's smoke test): launch a NodeClaim, register its Node,
        // bind the pod there and report it running — what Karpenter, the kubelet and the scheduler do.
        for (const pod of await bed.kube.list('/api/v1/pods', 'karpctl.io/smoke-test=true')) {
          const pool = pod.spec?.nodeSelector?.['karpenter.sh/nodepool']
          if (!pool || done.has(pod.metadata.uid)) continue
          done.add(pod.metadata.uid)
          const claim = `${pool}-${String(pod.metadata.uid).slice(0, 5)}`
          await bed.kube.apply({
            apiVersion: 'karpenter.sh/v1',
            kind: 'NodeClaim',
            metadata: { name: claim, labels: { 'karpenter.sh/nodepool': pool } },
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
            },
          })
          await new Promise((r) => setTimeout(r, 1000))
          await bed.kube.apply({
            apiVersion: 'v1',
            kind: 'Node',
            metadata: { name: claim, labels: { 'karpenter.sh/nodepool': pool } },
          })
          await bed.kube.create({
            apiVersion: 'v1',
            kind: 'Binding',
            metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace },
            target: { apiVersion: 'v1', kind: 'Node', name: claim },
          })
          await bed.kube.mergePatch(
            `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`,
            { status: { phase: 'Running' } },
            'status',
          )
        }
      } catch {
        // an object mid-creation: next round
      }
      await new Promise((r) => setTimeout(r, 250))
    }
  })()
  return async () => {
    stopped = true
    await loop
  }
}

/** What exists in moto and the apiserver, normalised, to compare two end states. */
export async function inventory(bed: Bed, net: Network): Promise<Record<string, unknown>> {
  const aws = awsClients(bed)
  const roles = (await aws.iam.send(new ListRolesCommand({ MaxItems: 1000 }))).Roles ?? []
  const roleInfo: Record<string, unknown> = {}
  for (const r of roles.filter((x) => !x.Path?.startsWith('/aws-service-role/'))) {
    const n = r.RoleName!
    const [att, inl, tags] = await Promise.all([
      aws.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: n })),
      aws.iam.send(new ListRolePoliciesCommand({ RoleName: n })),
      aws.iam.send(new ListRoleTagsCommand({ RoleName: n })),
    ])
    roleInfo[n] = {
      trust: decodeURIComponent(r.AssumeRolePolicyDocument ?? ''),
      attached: (att.AttachedPolicies ?? []).map((p) => p.PolicyArn).sort(),
      inline: (inl.PolicyNames ?? []).sort(),
      tags: (tags.Tags ?? []).map((t) => `${t.Key}=${t.Value}`).sort(),
    }
  }
  const queues = (await aws.sqs.send(new ListQueuesCommand({}))).QueueUrls ?? []
  const queueInfo: Record<string, unknown> = {}
  for (const q of queues) {
    const [a, t] = await Promise.all([
      aws.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: q,
          AttributeNames: ['MessageRetentionPeriod', 'SqsManagedSseEnabled', 'Policy'],
        }),
      ),
      aws.sqs.send(new ListQueueTagsCommand({ QueueUrl: q })),
    ])
    queueInfo[q.split('/').pop()!] = { ...a.Attributes, tags: t.Tags }
  }
  const rules = (await aws.events.send(new ListRulesCommand({}))).Rules ?? []
  const ruleInfo: Record<string, unknown> = {}
  for (const r of rules) {
    const t = await aws.events.send(new ListTargetsByRuleCommand({ Rule: r.Name! }))
    ruleInfo[r.Name!] = {
      pattern: r.EventPattern,
      state: r.State,
      targets: (t.Targets ?? []).map((x) => `${x.Id}=${x.Arn}`),
    }
  }
  const subnets = (await aws.ec2.send(new DescribeSubnetsCommand({ SubnetIds: net.subnetIds }))).Subnets ?? []
  const sgs =
    (
      await aws.ec2.send(
        new DescribeSecurityGroupsCommand({
          GroupIds: [net.clusterSecurityGroupId, net.nodeSecurityGroupId],
        }),
      )
    ).SecurityGroups ?? []
  const tagList = (t?: { Key?: string; Value?: string }[]) =>
    (t ?? []).map((x) => `${x.Key}=${x.Value}`).sort()
  const oidc = (await aws.iam.send(new ListOpenIDConnectProvidersCommand({}))).OpenIDConnectProviderList ?? []
  const kube = bed.kube
  const secrets = await kube.list('/api/v1/secrets', 'owner=helm')
  const pick = (o: KubeObject | undefined) => (o ? { labels: o.metadata?.labels, spec: o.spec } : null)
  const awsAuth = await kube.get('/api/v1/namespaces/kube-system/configmaps/aws-auth')
  return {
    roles: roleInfo,
    queues: queueInfo,
    rules: ruleInfo,
    oidcProviders: oidc.map((p) => p.Arn).sort(),
    subnetTags: Object.fromEntries(subnets.map((s) => [s.SubnetId, tagList(s.Tags)])),
    sgTags: Object.fromEntries(
      sgs.map((g) => [g.GroupId, { tags: tagList(g.Tags), ingress: g.IpPermissions?.length }]),
    ),
    // What is deployed, not the history: a re-run that finds a release still pending (the killed run's
    // helm was mid-install) upgrades it once more, a superseded revision and the same end state.
    helm: secrets
      .filter((s) => s.metadata.labels?.status !== 'superseded')
      .map(
        (s) =>
          `${s.metadata.namespace}/${s.metadata.labels?.name} ${s.metadata.labels?.status} managed-by=${s.metadata.labels?.['karpctl.io/managed-by']}`,
      )
      .sort(),
    nodePool: pick(await kube.get('/apis/karpenter.sh/v1/nodepools/default').catch(() => undefined)),
    nodeClass: pick(
      await kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default').catch(() => undefined),
    ),
    awsAuth: { data: awsAuth?.data, annotations: awsAuth?.metadata?.annotations },
  }
}

/**
 * A fresh bed holding a bare cluster, with the controller's part played; both stop when the test ends
 * (the start of every install, tenant, teardown, lock and upgrade scenario). `karpenter: true` runs the
 * real controller instead (it follows the Deployment an install makes) and seeds a CONFIG_MAP cluster:
 * moto has no access-entry API.
 */
export async function bareClusterBed(
  t: { after: (fn: () => Promise<void>) => void },
  opts: Parameters<typeof seedBareCluster>[1] & { karpenter?: boolean } = {},
): Promise<{ bed: Bed; seed: Awaited<ReturnType<typeof seedBareCluster>> }> {
  const { karpenter, ...seedOpts } = opts
  const bed = await startBed({ karpenter })
  const seed = await seedBareCluster(
    bed,
    karpenter ? { authenticationMode: 'CONFIG_MAP', ...seedOpts } : seedOpts,
  )
  const stopController = karpenter ? async () => undefined : playController(bed, seed.net)
  t.after(async () => {
    await stopController()
    await bed.stop()
  })
  return { bed, seed }
}
