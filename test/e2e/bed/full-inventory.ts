// Everything a command could change on the bed, normalised, to prove that it gave back exactly what
// it found: install-seed.ts' inventory() plus customer managed policies (documents, attachments, tags),
// every queue attribute, rule tags, OIDC providers with their tags, instance profiles, security group
// rules, CloudFormation stacks and their resources, and the Kubernetes objects of an install (the
// deployed Helm release by content — chart, values, manifest — not by revision count, NodePools and
// EC2NodeClasses with labels/annotations/spec, the controller ServiceAccount, Karpenter's CRDs).
import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { DescribeSecurityGroupsCommand } from '@aws-sdk/client-ec2'
import { ListRulesCommand, ListTagsForResourceCommand } from '@aws-sdk/client-eventbridge'
import {
  GetOpenIDConnectProviderCommand,
  GetPolicyVersionCommand,
  ListInstanceProfilesCommand,
  ListOpenIDConnectProvidersCommand,
  ListPoliciesCommand,
  ListPolicyTagsCommand,
} from '@aws-sdk/client-iam'
import { GetQueueAttributesCommand, ListQueuesCommand } from '@aws-sdk/client-sqs'
import type { Bed } from './bed.js'
import { CloudFormation } from './cloudformation.js'
import { inventory } from './install-seed.js'
import type { KubeObject } from './kube-client.js'
import { awsClients, type Network } from './seed.js'

/** Queue attributes that change by themselves (clock, message counts). */
const VOLATILE_QUEUE_ATTRIBUTES = new Set([
  'CreatedTimestamp',
  'LastModifiedTimestamp',
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesDelayed',
  'ApproximateNumberOfMessagesNotVisible',
])

/** Labels/annotations the apiserver or a rollout writes by itself. */
const VOLATILE_META = new Set(['deployment.kubernetes.io/revision'])

export interface HelmReleaseView {
  status: string
  chart: string
  /** the values the user gave (helm get values) */
  config: unknown
  /** sha256 of the rendered manifest */
  manifest: string
}

/** Decodes a Helm v3 release Secret (data.release: base64 of base64(gzip(JSON))). */
export function decodeHelmRelease(secret: KubeObject): KubeObject {
  const b64 = Buffer.from(String(secret.data?.release ?? ''), 'base64').toString('utf8')
  return JSON.parse(gunzipSync(Buffer.from(b64, 'base64')).toString('utf8')) as KubeObject
}

const meta = (o: KubeObject) => {
  const strip = (m?: Record<string, string>) =>
    m ? Object.fromEntries(Object.entries(m).filter(([k]) => !VOLATILE_META.has(k))) : undefined
  return { labels: strip(o.metadata?.labels), annotations: strip(o.metadata?.annotations) }
}

export async function fullInventory(bed: Bed, net: Network): Promise<Record<string, unknown>> {
  const aws = awsClients(bed)
  const base = await inventory(bed, net)

  const policies: Record<string, unknown> = {}
  for (const p of (await aws.iam.send(new ListPoliciesCommand({ Scope: 'Local', MaxItems: 1000 })))
    .Policies ?? []) {
    const [v, t] = await Promise.all([
      aws.iam.send(new GetPolicyVersionCommand({ PolicyArn: p.Arn!, VersionId: p.DefaultVersionId! })),
      aws.iam.send(new ListPolicyTagsCommand({ PolicyArn: p.Arn! })),
    ])
    policies[p.Arn!] = {
      path: p.Path,
      document: JSON.parse(decodeURIComponent(v.PolicyVersion?.Document ?? '{}')) as unknown,
      attachments: p.AttachmentCount,
      tags: (t.Tags ?? []).map((x) => `${x.Key}=${x.Value}`).sort(),
    }
  }

  const queues: Record<string, unknown> = {}
  for (const url of (await aws.sqs.send(new ListQueuesCommand({}))).QueueUrls ?? []) {
    const a = await aws.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }))
    queues[url.split('/').pop()!] = Object.fromEntries(
      Object.entries(a.Attributes ?? {}).filter(([k]) => !VOLATILE_QUEUE_ATTRIBUTES.has(k)),
    )
  }

  const ruleTags: Record<string, string[]> = {}
  for (const r of (await aws.events.send(new ListRulesCommand({}))).Rules ?? []) {
    const t = await aws.events.send(new ListTagsForResourceCommand({ ResourceARN: r.Arn! }))
    ruleTags[r.Name!] = (t.Tags ?? []).map((x) => `${x.Key}=${x.Value}`).sort()
  }

  const oidc: Record<string, unknown> = {}
  for (const p of (await aws.iam.send(new ListOpenIDConnectProvidersCommand({}))).OpenIDConnectProviderList ??
    []) {
    const d = await aws.iam.send(new GetOpenIDConnectProviderCommand({ OpenIDConnectProviderArn: p.Arn! }))
    oidc[p.Arn!] = {
      clientIds: d.ClientIDList,
      tags: (d.Tags ?? []).map((x) => `${x.Key}=${x.Value}`).sort(),
    }
  }

  const instanceProfiles = (
    (await aws.iam.send(new ListInstanceProfilesCommand({}))).InstanceProfiles ?? []
  ).map((p) => `${p.InstanceProfileName}: ${(p.Roles ?? []).map((r) => r.RoleName).join(',')}`)

  const sgs =
    (
      await aws.ec2.send(
        new DescribeSecurityGroupsCommand({
          GroupIds: [net.clusterSecurityGroupId, net.nodeSecurityGroupId],
        }),
      )
    ).SecurityGroups ?? []
  const sgRules = Object.fromEntries(
    sgs.map((g) => [
      g.GroupId,
      (g.IpPermissions ?? [])
        .map(
          (p) =>
            `${p.IpProtocol} ${p.FromPort}-${p.ToPort} from ${[
              ...(p.UserIdGroupPairs ?? []).map((u) => u.GroupId),
              ...(p.IpRanges ?? []).map((r) => r.CidrIp),
            ].join(',')}`,
        )
        .sort(),
    ]),
  )

  const cfn = new CloudFormation(bed)
  const stacks: Record<string, unknown> = {}
  for (const name of await cfn.listStackNames()) {
    const s = await cfn.describeStack(name)
    stacks[name] = {
      status: s.status,
      tags: s.tags,
      resources: Object.fromEntries(
        (await cfn.describeStackResources(name)).map((r) => [r.logicalId, `${r.physicalId} ${r.status}`]),
      ),
    }
  }

  const kube = bed.kube
  const listOr = (path: string) => kube.list(path).catch((): KubeObject[] => [])
  const helmReleases: Record<string, HelmReleaseView> = {}
  for (const s of await kube.list('/api/v1/secrets', 'owner=helm,status=deployed')) {
    const r = decodeHelmRelease(s)
    helmReleases[`${r.namespace}/${r.name}`] = {
      status: String(r.info?.status),
      chart: `${r.chart?.metadata?.name}-${r.chart?.metadata?.version}`,
      config: r.config ?? {},
      manifest: createHash('sha256')
        .update(String(r.manifest ?? ''))
        .digest('hex'),
    }
  }
  const byName = (objs: KubeObject[], pick: (o: KubeObject) => unknown) =>
    Object.fromEntries(objs.map((o) => [o.metadata.name as string, pick(o)]))
  const serviceAccounts = byName(
    (await kube.list('/api/v1/serviceaccounts')).filter((sa) => /karpenter/.test(sa.metadata.name)),
    meta,
  )
  const deployments = byName(await kube.list('/apis/apps/v1/namespaces/kube-system/deployments'), (d) => ({
    ...meta(d),
    replicas: d.spec?.replicas,
  }))

  return {
    ...base,
    helm: helmReleases,
    policies,
    queueAttributes: queues,
    ruleTags,
    oidcProviders: oidc,
    instanceProfiles: instanceProfiles.sort(),
    sgRules,
    stacks,
    nodePools: byName(await listOr('/apis/karpenter.sh/v1/nodepools'), (o) => ({ ...meta(o), spec: o.spec })),
    nodeClasses: byName(await listOr('/apis/karpenter.k8s.aws/v1/ec2nodeclasses'), (o) => ({
      ...meta(o),
      spec: o.spec,
    })),
    serviceAccounts,
    deployments,
    crds: (await kube.list('/apis/apiextensions.k8s.io/v1/customresourcedefinitions'))
      .map((c) => c.metadata.name as string)
      .filter((n) => /karpenter|x-k8s\.io$/.test(n))
      .sort(),
  }
}

/** Where two inventories differ, one line per path (`roles.X.tags: […] → […]`), for a readable failure. */
export function inventoryDiff(before: unknown, after: unknown, path = ''): string[] {
  const show = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v).slice(0, 300))
  const isMap = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
  if (isMap(before) && isMap(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
    return keys.flatMap((k) => inventoryDiff(before[k], after[k], path ? `${path}.${k}` : k))
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [`${path}: ${show(before)} → ${show(after)}`]
}
