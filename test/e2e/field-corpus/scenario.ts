// The field corpus's scenario shape and the edits scenarios share (issue 35, C). A scenario is a problem
// users reported (cited in `source`), made on the bed's getting-started account, or a healthy shape
// another tool makes; field-corpus.e2e.test.ts runs them.
import {
  CreatePolicyVersionCommand,
  DeletePolicyVersionCommand,
  DeleteServiceLinkedRoleCommand,
  DetachRolePolicyCommand,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  ListPolicyVersionsCommand,
} from '@aws-sdk/client-iam'
import {
  DeleteRuleCommand,
  ListRulesCommand,
  ListTargetsByRuleCommand,
  RemoveTargetsCommand,
} from '@aws-sdk/client-eventbridge'
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms'
import {
  awsClientConfig,
  helm,
  karpenterChartDir,
  type AwsClients,
  type Bed,
  type ChartVersion,
  type SeedResult,
} from '../bed/index.js'

export interface Ctx {
  bed: Bed
  aws: AwsClients
  seed: SeedResult
}

export interface Scenario {
  check: string
  /** what users did, in a few words */
  title: string
  /** where it was reported */
  source: string
  /** the break; absent for a healthy shape */
  breakIt?: (c: Ctx) => Promise<void>
  /** a healthy shape: applied on the healthy install; the check must not fail */
  shape?: (c: Ctx) => Promise<void>
  /** the failing finding (break) or the passing/skipped message (shape) */
  expect: RegExp
  /** README's --fix table repairs it */
  fixable?: boolean
  /** after the fix the check still warns, truly (the warning and why it is true): not a pass */
  afterFix?: { warn: RegExp; why: string }
  /** a warning-severity check (cluster-autoscaler, helm-registry-auth) warns; the rest fail */
  status?: 'warn'
  /** undoes what the bed's reset does not (CRDs kept between scenarios, objects outside the reset) */
  cleanup?: (c: Ctx) => Promise<void>
  /** the chart the healthy install of this scenario runs (1.14.1 unless said) */
  chart?: ChartVersion
  /** found, not resolved yet: run and reported, not counted against the suite (node:test todo) */
  todo?: string
}

export const pool = '/apis/karpenter.sh/v1/nodepools/default'
export const NODE_CLASS = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default'

/** Rewrites one managed policy's default version through `edit` (policy versions, as a console edit does). */
export async function editManagedPolicy(
  aws: AwsClients,
  arn: string,
  edit: (doc: { Statement: { Sid?: string }[] }) => void,
) {
  const meta = await aws.iam.send(new GetPolicyCommand({ PolicyArn: arn }))
  const v = await aws.iam.send(
    new GetPolicyVersionCommand({ PolicyArn: arn, VersionId: meta.Policy!.DefaultVersionId! }),
  )
  const doc = JSON.parse(decodeURIComponent(v.PolicyVersion!.Document!)) as { Statement: { Sid?: string }[] }
  edit(doc)
  const versions = await aws.iam.send(new ListPolicyVersionsCommand({ PolicyArn: arn }))
  for (const old of (versions.Versions ?? []).filter((x) => !x.IsDefaultVersion))
    await aws.iam.send(new DeletePolicyVersionCommand({ PolicyArn: arn, VersionId: old.VersionId! }))
  await aws.iam.send(
    new CreatePolicyVersionCommand({
      PolicyArn: arn,
      PolicyDocument: JSON.stringify(doc),
      SetAsDefault: true,
    }),
  )
}
export const dropSid = (sid: string) => (doc: { Statement: { Sid?: string }[] }) => {
  doc.Statement = doc.Statement.filter((s) => s.Sid !== sid)
}
export const policyWith = (seed: SeedResult, fragment: string) =>
  Object.entries(seed.controllerPolicyArns).find(([name]) => name.includes(fragment))![1]

/**
 * The spot service-linked role deleted as AWS deletes one. moto names it AWSServiceRoleForspot (AWS:
 * AWSServiceRoleForEC2Spot) under the same path /aws-service-role/spot.amazonaws.com/, by which doctor
 * finds it; the name is the seed's, not AWS's (deleting AWS's name was the old todo: no such role).
 */
export async function deleteSpotRole(aws: AwsClients, seed: SeedResult) {
  const name = seed.spotServiceLinkedRoleArn.split('/').at(-1)!
  await aws.iam.send(new DeleteServiceLinkedRoleCommand({ RoleName: name }))
}

/** The default NodePool's capacity types (amd64 kept): spot allowed or not. */
export async function capacityTypes(bed: Bed, types: string[]) {
  await bed.kube.mergePatch(pool, {
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: types },
          ],
        },
      },
    },
  })
}
/** The seed's network, as the bed's security-group helpers take it. */
export const seedNet = (seed: SeedResult) => ({
  vpcId: seed.vpcId,
  subnetIds: seed.subnetIds,
  availabilityZones: seed.availabilityZones,
  clusterSecurityGroupId: seed.clusterSecurityGroupId,
  nodeSecurityGroupId: seed.nodeSecurityGroupId,
})
export const allowSpot = (bed: Bed) => capacityTypes(bed, ['spot', 'on-demand'])

/** An AWS managed policy detached from the seed's node role. */
export const detachNodePolicy =
  (name: string) =>
  async ({ aws, seed }: Ctx) => {
    await aws.iam.send(
      new DetachRolePolicyCommand({
        RoleName: seed.nodeRoleName,
        PolicyArn: `arn:aws:iam::aws:policy/${name}`,
      }),
    )
  }

export async function upgradeValues(bed: Bed, args: string[]) {
  await helm(bed, [
    'upgrade',
    'karpenter',
    karpenterChartDir('1.14.1'),
    '-n',
    'kube-system',
    '--reuse-values',
    ...args,
  ])
}

/** A customer managed key named by the EC2NodeClass's root volume, then `state` applied to it. */
export async function nodeClassKey(c: Ctx, state: (kms: KMSClient, keyId: string) => Promise<unknown>) {
  const kms = new KMSClient(awsClientConfig(c.bed))
  // The key policy the troubleshooting guide gives ("Node terminates before ready on failed encrypted
  // EBS volume"): the controller and the node role may use it through EC2; only the state breaks it.
  const users = { AWS: [c.seed.controllerRoleArn, c.seed.nodeRoleArn] }
  const policy = {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'Admin',
        Effect: 'Allow',
        Principal: { AWS: `arn:aws:iam::${c.seed.accountId}:root` },
        Action: ['kms:Describe*', 'kms:Get*', 'kms:List*', 'kms:Put*'],
        Resource: '*',
      },
      {
        Sid: 'Use',
        Effect: 'Allow',
        Principal: users,
        Action: ['kms:GenerateDataKeyWithoutPlaintext', 'kms:Decrypt'],
        Resource: '*',
        Condition: { StringEquals: { 'kms:ViaService': `ec2.${c.seed.region}.amazonaws.com` } },
      },
      {
        Sid: 'Grants',
        Effect: 'Allow',
        Principal: users,
        Action: 'kms:CreateGrant',
        Resource: '*',
        Condition: { Bool: { 'kms:GrantIsForAWSResource': 'true' } },
      },
    ],
  }
  const key = await kms.send(
    new CreateKeyCommand({ Description: 'karpenter ebs', Policy: JSON.stringify(policy) }),
  )
  await state(kms, key.KeyMetadata!.KeyId!)
  await c.bed.kube.mergePatch(NODE_CLASS, {
    spec: {
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          ebs: { encrypted: true, kmsKeyID: key.KeyMetadata!.Arn!, volumeSize: '20Gi', volumeType: 'gp3' },
        },
      ],
    },
  })
}

/** Deletes the EventBridge rules whose pattern mentions `detail` (by what they match: a fix may rename them). */
export async function deleteRulesMatching(aws: AwsClients, detail: string) {
  const rules = (await aws.events.send(new ListRulesCommand({}))).Rules ?? []
  for (const r of rules.filter((x) => (x.EventPattern ?? '').includes(detail))) {
    const t = await aws.events.send(new ListTargetsByRuleCommand({ Rule: r.Name! }))
    await aws.events.send(
      new RemoveTargetsCommand({ Rule: r.Name!, Ids: (t.Targets ?? []).map((x) => x.Id!) }),
    )
    await aws.events.send(new DeleteRuleCommand({ Name: r.Name! }))
  }
}

/** A controller pod bound to `nodeName` (no kubelet runs it): what the release's selector finds. */
export async function controllerPod(c: Ctx, name: string, nodeName: string) {
  await c.bed.kube.apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'kube-system',
      labels: { 'app.kubernetes.io/instance': 'karpenter', 'app.kubernetes.io/name': 'karpenter' },
    },
    spec: {
      nodeName,
      containers: [{ name: 'controller', image: 'public.ecr.aws/karpenter/controller:1.14.1' }],
    },
  })
}

/**
 * A cleanup: the pods the bed's reset keeps (it resets nodes, not pods). Grace 0: no kubelet confirms
 * a graceful deletion, and a pod left Terminating would still be listed as the controller's.
 */
export const deletePods =
  (...names: string[]) =>
  async ({ bed }: Ctx) => {
    for (const n of names)
      await bed.kube.request('DELETE', `/api/v1/namespaces/kube-system/pods/${n}`, {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        gracePeriodSeconds: 0,
      })
  }
