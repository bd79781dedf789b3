// What only teardown removes or gives back: Helm releases, the interruption queue and rules, the Pod
// Identity association, the OIDC provider karpctl made, the changes karpctl recorded on resources it does
// not own, and (with --sweep) what Karpenter left behind. Each proves karpctl's part before touching it.
import type * as ec2 from '@aws-sdk/client-ec2'
import type * as eb from '@aws-sdk/client-eventbridge'
import type * as eks from '@aws-sdk/client-eks'
import type * as iam from '@aws-sdk/client-iam'
import type * as sqs from '@aws-sdk/client-sqs'
import { isNotFound, toReadFailure } from '../../context/aws.js'
import type { KubeClient } from '../../context/kube.js'
import { releaseNamed } from '../../facts/collect-kube.js'
import { stackKeptNote } from '../../facts/collect-owners.js'
import type { PolicyDocument } from '../../facts/types.js'
import { parsePolicyDocument } from '../../facts/policy-document.js'
import { ADOPTED_BY, REPAIRED_STATEMENTS } from '../../desired/ownership.js'
import { isOwned } from '../compare.js'
import { leafChanges } from '../diff.js'
import type { Resource, Verdict } from '../types.js'
import { SCALED_FROM } from '../../desired/ownership.js'
import {
  CRD_ADOPTED_BY,
  HELM_RELEASE_NAME,
  HELM_RELEASE_NAMESPACE,
  REPLACED_MARKS,
  replacedMarks,
  type Crd,
} from './crd-handover.js'
import { ADDED_TARGET, ENABLED_FROM } from './event-rule.js'
import { ADOPTED_FROM_REVISION, UPGRADED_TO } from './helm-release.js'
import { ADDED_POLICY, withoutAddedStatements } from './queue-policy.js'
import { ADDED_TAGS, REPAIRED_TAGS } from './discovery-tags.js'
import { ADDED_INGRESS, REPAIRED_INGRESS } from './webhook-ingress.js'

const tagMap = (t?: { Key?: string; Value?: string }[]) =>
  Object.fromEntries((t ?? []).map((x) => [x.Key ?? '', x.Value ?? '']))
const gone: Verdict = { action: 'unchanged', changes: [], note: 'already gone' }

/** Deleted when it carries karpctl's ownership tags; otherwise kept, naming the tool that made it. */
const ownedVerdict = (
  cur: { tags: Record<string, string> } | null,
  ownership: Record<string, string>,
): Verdict =>
  !cur
    ? gone
    : isOwned(cur.tags, ownership)
      ? { action: 'delete', changes: [] }
      : { action: 'unchanged', changes: [], note: ownerHint(cur.tags) }

async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
}

/** Where a resource that is not karpctl's came from, and the command its own tool removes it with. */
export function ownerHint(tags: Record<string, string>): string {
  const stack = tags['aws:cloudformation:stack-name']
  if (stack)
    return `kept: made by CloudFormation stack ${stack} (\`aws cloudformation delete-stack --stack-name ${stack}\`)`
  return 'kept: karpctl did not make it (no karpctl.io/managed-by tag); remove it with the tool that made it (e.g. `terraform destroy`)'
}

export function helmReleaseAbsent(w: {
  address: string
  release: string
  namespace: string
  labels: Record<string, string>
  dependsOn: string[]
  /**
   * The karpenter-crd release's CRDs that existed before karpctl handed them to it (the cluster whose
   * record they carry): the release is then forgotten, never uninstalled — helm uninstall would delete
   * them with every NodePool, whatever their live annotations say (Helm reads its keep policy from the
   * release's manifest only).
   */
  handedCrdsOf?: string
}): Resource<{ labels: Record<string, string>; chart: string; revision: number; handed: string[] }> {
  return {
    address: w.address,
    kind: 'Helm release',
    name: `${w.namespace}/${w.release}`,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ kube }) {
      const r = await releaseNamed(kube, w.namespace, w.release)
      if (!r) return null
      const handed = w.handedCrdsOf ? await handedCrds(kube, w.handedCrdsOf) : []
      return {
        labels: r.labels,
        chart: `${r.release.chartName}-${r.release.chartVersion}`,
        revision: r.release.revision,
        handed: handed.map((c) => c.metadata.name),
      }
    },
    verdict(cur) {
      if (!cur) return gone
      if (!isOwned(cur.labels, w.labels)) {
        const before = cur.labels[ADOPTED_FROM_REVISION]
        if (before)
          return {
            action: 'update',
            changes: [{ field: 'revision', from: cur.revision, to: `rollback to ${before}` }],
            note: `kept: installed without karpctl; given back as it was before karpctl (revision ${before}, \`helm uninstall ${w.release} -n ${w.namespace}\` removes it)`,
          }
        const ours = karpctlLabels(cur.labels)
        const upgraded = cur.labels[UPGRADED_TO]
        if (ours.length)
          return {
            action: 'update',
            changes: ours.map((k) => ({ field: `label ${k}`, from: cur.labels[k] })),
            note: `kept: installed without karpctl${upgraded ? `, upgraded by karpctl to ${upgraded} as asked (kept at that version)` : ''}; only karpctl's labels come off (\`helm uninstall ${w.release} -n ${w.namespace}\` removes it)`,
          }
        return {
          action: 'unchanged',
          changes: [],
          note: `kept: installed without karpctl (\`helm uninstall ${w.release} -n ${w.namespace}\`)`,
        }
      }
      if (cur.handed.length)
        return {
          action: 'delete',
          changes: [{ field: 'chart', from: cur.chart }],
          note: `its CRDs existed before karpctl (${cur.handed.join(', ')}): the release's record is removed and they are kept, with every object of their kinds`,
        }
      return { action: 'delete', changes: [{ field: 'chart', from: cur.chart }] }
    },
    async apply({ helm, kube }, cur) {
      const notOurs = cur && !isOwned(cur.labels, w.labels)
      const before = notOurs ? cur.labels[ADOPTED_FROM_REVISION] : undefined
      if (notOurs && !before) {
        await stripKarpctlLabels(kube, w.namespace, w.release)
        return
      }
      if (before) {
        // The rollback's revision is the old one's copy, labels included: no adoption mark is left.
        await (
          await helm()
        ).rollback({
          release: w.release,
          namespace: w.namespace,
          revision: Number(before),
          wait: true,
        })
        return
      }
      if (cur?.handed.length) {
        // The CRDs the release itself created (no record of existing before) are karpctl's: deleted,
        // as helm would. Then Helm's record of the release, its Secrets: without them helm forgets the
        // release and deletes nothing. The handed CRDs' marks are given back after (kube.crds.restore).
        const l = await kube.fresh<{ items: Crd[] }>(
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        )
        for (const c of l?.items ?? []) {
          const a = c.metadata.annotations ?? {}
          if (
            a[HELM_RELEASE_NAME] === w.release &&
            a[HELM_RELEASE_NAMESPACE] === w.namespace &&
            a[CRD_ADOPTED_BY] === undefined
          )
            await kube.write(
              'DELETE',
              `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.metadata.name}`,
            )
        }
        const sel = encodeURIComponent(`owner=helm,name=${w.release}`)
        await kube.write('DELETE', `/api/v1/namespaces/${w.namespace}/secrets?labelSelector=${sel}`)
        return
      }
      await (await helm()).uninstall(w.release, w.namespace)
    },
  }
}

/** karpctl's labels on a release (its created mark, an adoption, an upgrade's): all under karpctl.io/. */
const karpctlLabels = (labels: Record<string, string>) =>
  Object.keys(labels)
    .filter((k) => k.startsWith('karpctl.io/'))
    .sort()

/**
 * karpctl's labels off every revision of a release it keeps (Helm carries a release's labels from its
 * newest revision into the next, so each revision loses them): one merge patch per Secret.
 */
async function stripKarpctlLabels(kube: KubeClient, namespace: string, release: string) {
  const sel = encodeURIComponent(`owner=helm,name=${release}`)
  const l = await kube.fresh<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>(
    `/api/v1/namespaces/${namespace}/secrets?labelSelector=${sel}`,
  )
  for (const s of l?.items ?? []) {
    const off = karpctlLabels(s.metadata.labels ?? {})
    if (off.length)
      await kube.write(
        'PATCH',
        `/api/v1/namespaces/${namespace}/secrets/${s.metadata.name}`,
        { metadata: { labels: Object.fromEntries(off.map((k) => [k, null])) } },
        'application/merge-patch+json',
      )
  }
}

async function handedCrds(kube: KubeClient, clusterName: string): Promise<Crd[]> {
  const l = await kube.get<{ items: Crd[] }>('/apis/apiextensions.k8s.io/v1/customresourcedefinitions')
  return (l?.items ?? []).filter((c) => c.metadata.annotations?.[CRD_ADOPTED_BY] === clusterName)
}

interface QueueState {
  /** The owning stack's note, when CloudFormation says one owns it. */
  owner?: string
  url: string
  arn: string
  tags: Record<string, string>
  policy: PolicyDocument | null
}

/** karpctl's queue is deleted; an adopted one gets back its policy as found and loses karpctl's records. */
export function queueAbsent(w: {
  name: string
  ownership: Record<string, string>
  dependsOn: string[]
  keptNote?: string
  /** The install doctor --fix repaired goes too: the statements its repair recorded go as well. */
  repairs?: boolean
}): Resource<QueueState> {
  const statementKeys = [ADDED_POLICY, ...(w.repairs ? [REPAIRED_STATEMENTS] : [])]
  const added = (cur: QueueState) =>
    statementKeys.flatMap((k) => (cur.tags[k] ?? '').split(',').filter(Boolean))
  const restored = (cur: QueueState) => withoutAddedStatements(cur.policy, cur.arn, added(cur))
  const records = (cur: QueueState) => [ADOPTED_BY, ...statementKeys].filter((k) => cur.tags[k] !== undefined)
  return {
    address: 'sqs-queue.interruption',
    kind: 'SQS queue',
    name: w.name,
    group: 'Interruption handling',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      const q = await orNull(
        aws.call<sqs.GetQueueUrlCommandOutput>('sqs', 'GetQueueUrl', { QueueName: w.name }),
      )
      if (!q?.QueueUrl) return null
      const t = await aws.call<sqs.ListQueueTagsCommandOutput>('sqs', 'ListQueueTags', {
        QueueUrl: q.QueueUrl,
      })
      const tags = t.Tags ?? {}
      const owner = isOwned(tags, w.ownership) ? undefined : await stackKeptNote(aws, q.QueueUrl)
      // The policy matters only where karpctl recorded adding to it.
      if (statementKeys.every((k) => tags[k] === undefined))
        return { owner, url: q.QueueUrl, arn: '', tags, policy: null }
      const a = await aws.call<sqs.GetQueueAttributesCommandOutput>('sqs', 'GetQueueAttributes', {
        QueueUrl: q.QueueUrl,
        AttributeNames: ['QueueArn', 'Policy'],
      })
      return {
        owner,
        url: q.QueueUrl,
        arn: a.Attributes?.QueueArn ?? '',
        tags,
        policy: a.Attributes?.Policy ? parsePolicyDocument(a.Attributes.Policy) : null,
      }
    },
    verdict(cur) {
      if (!cur || isOwned(cur.tags, w.ownership)) return ownedVerdict(cur, w.ownership)
      const kept = w.keptNote ?? cur.owner ?? ownerHint(cur.tags)
      const keys = records(cur)
      if (!keys.length) return { action: 'unchanged', changes: [], note: kept }
      return {
        action: 'update',
        changes: [
          ...(restored(cur) ? leafChanges(cur.policy ?? undefined, restored(cur), 'Policy') : []),
          ...removedTags(cur.tags, keys),
        ],
        note: `${kept}; karpctl's recorded changes given back`,
      }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      if (isOwned(cur.tags, w.ownership)) {
        await orNull(aws.write('sqs', 'DeleteQueue', { QueueUrl: cur.url }))
        return
      }
      const policy = restored(cur)
      if (policy)
        await aws.write('sqs', 'SetQueueAttributes', {
          QueueUrl: cur.url,
          Attributes: { Policy: JSON.stringify(policy) },
        })
      const keys = records(cur)
      if (keys.length) await aws.write('sqs', 'UntagQueue', { QueueUrl: cur.url, TagKeys: keys })
    },
  }
}

interface RuleTeardownState {
  owner?: string
  arn: string
  targets: string[]
  tags: Record<string, string>
}

/** karpctl's rule is deleted; an adopted one loses the target karpctl added, its records, and is
 * disabled again when karpctl enabled it. */
export function ruleAbsent(w: {
  key: string
  name: string
  ownership: Record<string, string>
  dependsOn: string[]
  keptNote?: string
}): Resource<RuleTeardownState> {
  const records = (cur: RuleTeardownState) =>
    [ADOPTED_BY, ADDED_TARGET, ENABLED_FROM].filter((k) => cur.tags[k] !== undefined)
  return {
    address: `events-rule.${w.key}`,
    kind: 'EventBridge rule',
    name: w.name,
    group: 'Interruption handling',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      const r = await orNull(
        aws.call<eb.DescribeRuleCommandOutput>('eventbridge', 'DescribeRule', { Name: w.name }),
      )
      if (!r) return null
      const [t, tags] = await Promise.all([
        aws.call<eb.ListTargetsByRuleCommandOutput>('eventbridge', 'ListTargetsByRule', { Rule: w.name }),
        aws.call<eb.ListTagsForResourceCommandOutput>('eventbridge', 'ListTagsForResource', {
          ResourceARN: r.Arn,
        }),
      ])
      const tagged = tagMap(tags.Tags)
      const owner = isOwned(tagged, w.ownership) ? undefined : await stackKeptNote(aws, w.name)
      return { owner, arn: r.Arn ?? '', targets: (t.Targets ?? []).map((x) => x.Id ?? ''), tags: tagged }
    },
    verdict(cur) {
      if (!cur || isOwned(cur.tags, w.ownership)) return ownedVerdict(cur, w.ownership)
      const kept = w.keptNote ?? cur.owner ?? ownerHint(cur.tags)
      const keys = records(cur)
      if (!keys.length) return { action: 'unchanged', changes: [], note: kept }
      const target = cur.tags[ADDED_TARGET]
      return {
        action: 'update',
        changes: [
          ...(target && cur.targets.includes(target) ? [{ field: 'target', from: target }] : []),
          ...(cur.tags[ENABLED_FROM]
            ? [{ field: 'state', from: 'ENABLED', to: cur.tags[ENABLED_FROM] }]
            : []),
          ...removedTags(cur.tags, keys),
        ],
        note: `${kept}; karpctl's recorded changes given back`,
      }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      if (!isOwned(cur.tags, w.ownership)) {
        const target = cur.tags[ADDED_TARGET]
        if (target && cur.targets.includes(target))
          await orNull(aws.write('eventbridge', 'RemoveTargets', { Rule: w.name, Ids: [target] }))
        if (cur.tags[ENABLED_FROM] === 'DISABLED')
          await orNull(aws.write('eventbridge', 'DisableRule', { Name: w.name }))
        const keys = records(cur)
        if (keys.length)
          await aws.write('eventbridge', 'UntagResource', { ResourceARN: cur.arn, TagKeys: keys })
        return
      }
      if (cur.targets.length)
        await orNull(aws.write('eventbridge', 'RemoveTargets', { Rule: w.name, Ids: cur.targets }))
      await orNull(aws.write('eventbridge', 'DeleteRule', { Name: w.name }))
    },
  }
}

export function podIdentityAbsent(w: {
  clusterName: string
  namespace: string
  serviceAccount: string
  ownership: Record<string, string>
  dependsOn: string[]
}): Resource<{ id: string; tags: Record<string, string> }> {
  return {
    address: 'eks-pod-identity.controller',
    kind: 'EKS Pod Identity association',
    name: `${w.namespace}/${w.serviceAccount}`,
    group: 'Controller identity',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      let l: eks.ListPodIdentityAssociationsCommandOutput
      try {
        l = await aws.call<eks.ListPodIdentityAssociationsCommandOutput>(
          'eks',
          'ListPodIdentityAssociations',
          {
            clusterName: w.clusterName,
            namespace: w.namespace,
            serviceAccount: w.serviceAccount,
          },
        )
      } catch (err) {
        // An endpoint without Pod Identity cannot hold an association karpctl made.
        if (toReadFailure(err, '').kind === 'unsupported') return null
        throw err
      }
      const id = l.associations?.[0]?.associationId
      if (!id) return null
      const d = await aws.call<eks.DescribePodIdentityAssociationCommandOutput>(
        'eks',
        'DescribePodIdentityAssociation',
        { clusterName: w.clusterName, associationId: id },
      )
      return { id, tags: d.association?.tags ?? {} }
    },
    verdict: (cur) => ownedVerdict(cur, w.ownership),
    async apply({ aws }, cur) {
      if (cur)
        await orNull(
          aws.write('eks', 'DeletePodIdentityAssociation', {
            clusterName: w.clusterName,
            associationId: cur.id,
          }),
        )
    },
  }
}

/** karpctl's OIDC provider, unless a role karpctl does not remove still trusts it (other IRSA users). */
export function oidcProviderAbsent(w: {
  arn: string
  ownership: Record<string, string>
  keepRoles: string[]
  dependsOn: string[]
}): Resource<{ tags: Record<string, string>; trustedBy: string[] }> {
  return {
    address: 'iam-oidc-provider.cluster',
    kind: 'IAM OIDC provider',
    name: w.arn.slice(w.arn.indexOf('/') + 1),
    group: 'IAM',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      const t = await orNull(
        aws.call<iam.ListOpenIDConnectProviderTagsCommandOutput>('iam', 'ListOpenIDConnectProviderTags', {
          OpenIDConnectProviderArn: w.arn,
        }),
      )
      if (!t) return null
      const roles = await aws.all<iam.ListRolesCommandOutput, iam.Role>(
        'iam',
        'ListRoles',
        {},
        'Marker',
        (o) => ({ items: o.Roles, next: o.IsTruncated ? o.Marker : undefined }),
      )
      const trustedBy = roles
        .filter(
          (r) =>
            !w.keepRoles.includes(r.RoleName ?? '') &&
            decodeURIComponent(r.AssumeRolePolicyDocument ?? '').includes(w.arn),
        )
        .map((r) => r.RoleName ?? '')
      return { tags: tagMap(t.Tags), trustedBy }
    },
    verdict(cur) {
      if (!cur) return gone
      if (!isOwned(cur.tags, w.ownership))
        return { action: 'unchanged', changes: [], note: 'kept: karpctl did not make it' }
      if (cur.trustedBy.length)
        return {
          action: 'unchanged',
          changes: [],
          note: `kept: still trusted by ${cur.trustedBy.join(', ')}`,
        }
      return { action: 'delete', changes: [] }
    },
    async apply({ aws }) {
      await orNull(aws.write('iam', 'DeleteOpenIDConnectProvider', { OpenIDConnectProviderArn: w.arn }))
    },
  }
}

interface HandedCrd {
  name: string
  restore: Record<string, unknown>
  /** The marks `restore` sets, as they are now. */
  now: Record<string, unknown>
}

/** The tags a give-back removes, each with the value it has. */
const removedTags = (tags: Record<string, string>, keys: string[]) =>
  keys.map((k) => ({ field: `tags.${k}`, from: tags[k] }))

/** A merge patch's nulls are removals: absent, as a plan shows them. */
const withoutNulls = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(
        Object.entries(v)
          .filter(([, x]) => x !== null)
          .map(([k, x]) => [k, withoutNulls(x)]),
      )
    : v

/**
 * CRDs that existed before karpctl handed them to its karpenter-crd release (install --adopt) get back
 * Helm's marks as they were; karpctl's record and the keep policy (which kept them through the release's
 * uninstall) go in the same patch.
 */
export function handedCrdsRestore(w: { clusterName: string; dependsOn: string[] }): Resource<HandedCrd[]> {
  return {
    address: 'kube.crds.restore',
    kind: 'CRD ownership',
    name: `${CRD_ADOPTED_BY}=${w.clusterName}`,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { restored: true },
    permissions: [],
    async observe({ kube }) {
      return (await handedCrds(kube, w.clusterName)).map((c) => {
        let before: { labels?: object; annotations?: object } = {}
        try {
          before = JSON.parse(c.metadata.annotations?.[REPLACED_MARKS] ?? '{}') as typeof before
        } catch {
          // An unreadable record: the marks come off (the state before any Helm release held it).
        }
        const restore = replacedMarks({ metadata: { name: c.metadata.name } })
        const labels = { ...restore.labels, ...before.labels }
        const annotations = {
          ...restore.annotations,
          ...before.annotations,
          [CRD_ADOPTED_BY]: null,
          [REPLACED_MARKS]: null,
        }
        const now = (have: Record<string, string> | undefined, marks: object) =>
          Object.fromEntries(
            Object.keys(marks).flatMap((k) => (have?.[k] === undefined ? [] : [[k, have[k]]])),
          )
        return {
          name: c.metadata.name,
          restore: { labels, annotations },
          now: {
            labels: now(c.metadata.labels, labels),
            annotations: now(c.metadata.annotations, annotations),
          },
        }
      })
    },
    verdict: (cur) =>
      !cur?.length
        ? { action: 'unchanged', changes: [], note: 'nothing recorded' }
        : {
            action: 'update',
            // Each mark from what it is now to what it was before karpctl (a null one comes off).
            changes: cur.flatMap((c) => leafChanges(c.now, withoutNulls(c.restore), c.name)),
          },
    async apply({ kube }, cur) {
      for (const c of cur ?? [])
        await kube.write(
          'PATCH',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.name}`,
          { metadata: c.restore },
          'application/merge-patch+json',
        )
    },
  }
}

interface Tagged {
  id: string
  remove: string[]
  /** The resource's tags now (what the plan shows going). */
  tags: Record<string, string>
}

/**
 * The tags karpctl recorded adding (karpctl.io/added-tags) come off; tags that were there before stay.
 * With `repairs` (the install doctor --fix repaired is going too), the tags a repair recorded
 * (karpctl.io/repaired-tags) come off as well. A resource whose discovery tag is already gone is still
 * found by its record, in the cluster's VPC; one another cluster discovers is not this teardown's.
 */
export function recordedTagsRestore(w: {
  clusterName: string
  vpcId?: string
  repairs?: boolean
  dependsOn: string[]
}): Resource<Tagged[]> {
  const records = [ADDED_TAGS, ...(w.repairs ? [REPAIRED_TAGS] : [])]
  return {
    address: 'ec2-tags.restore',
    kind: 'recorded tags',
    name: `${records.join(', ')} (cluster ${w.clusterName})`,
    group: 'Network',
    dependsOn: w.dependsOn,
    desired: { restored: true },
    permissions: [],
    async observe({ aws }) {
      // Two listings: the records on what this cluster discovers, and (the discovery tag gone) in its
      // VPC. EC2 emulators differ in which filters they honour; both are narrowed again below.
      // One record key per listing: moto (5.2) matches a multi-valued tag-key filter as none.
      const scopes = records.flatMap((record) => [
        [
          { Name: 'tag-key', Values: [record] },
          { Name: 'tag:karpenter.sh/discovery', Values: [w.clusterName] },
        ],
        ...(w.vpcId
          ? [
              [
                { Name: 'tag-key', Values: [record] },
                { Name: 'vpc-id', Values: [w.vpcId] },
              ],
            ]
          : []),
      ])
      const listings = await Promise.all(
        scopes.map((Filters) =>
          Promise.all([
            aws.call<ec2.DescribeSubnetsCommandOutput>('ec2', 'DescribeSubnets', { Filters }),
            aws.call<ec2.DescribeSecurityGroupsCommandOutput>('ec2', 'DescribeSecurityGroups', { Filters }),
          ]),
        ),
      )
      const byId = <T>(items: T[], id: (t: T) => string | undefined) => [
        ...new Map(items.map((x) => [id(x) ?? '', x])).values(),
      ]
      const subnets = {
        Subnets: byId(
          listings.flatMap(([s]) => s.Subnets ?? []),
          (s) => s.SubnetId,
        ),
      }
      const groups = {
        SecurityGroups: byId(
          listings.flatMap(([, g]) => g.SecurityGroups ?? []),
          (g) => g.GroupId,
        ),
      }
      // This cluster's: discovered by it, or (its discovery tag gone) in its VPC; never another cluster's.
      const of = (id: string, tags: Record<string, string>, vpc?: string): Tagged[] => {
        const discovery = tags['karpenter.sh/discovery']
        if (discovery !== undefined && discovery !== w.clusterName) return []
        if (discovery === undefined && (!w.vpcId || vpc !== w.vpcId)) return []
        const keys = records.filter((r) => tags[r] !== undefined)
        const remove = [...keys.flatMap((r) => (tags[r] ?? '').split(',').filter(Boolean)), ...keys]
        return keys.length ? [{ id, remove: [...new Set(remove)], tags }] : []
      }
      return [
        ...(subnets.Subnets ?? []).flatMap((s) => of(s.SubnetId ?? '', tagMap(s.Tags), s.VpcId)),
        ...(groups.SecurityGroups ?? []).flatMap((g) => of(g.GroupId ?? '', tagMap(g.Tags), g.VpcId)),
      ]
    },
    verdict: (cur) =>
      !cur?.length
        ? { action: 'unchanged', changes: [], note: 'nothing recorded' }
        : {
            action: 'update',
            // Each tag that comes off with its value, the records too (a tag already gone is not shown).
            changes: cur.flatMap((t) =>
              t.remove
                .filter((k) => t.tags[k] !== undefined)
                .map((k) => ({ field: `${t.id} ${k}`, from: t.tags[k] })),
            ),
          },
    async apply({ aws }, cur) {
      // The record is removed in the same call as the tags it lists.
      for (const t of cur ?? [])
        await aws.write('ec2', 'DeleteTags', { Resources: [t.id], Tags: t.remove.map((Key) => ({ Key })) })
    },
  }
}

/** The tcp/8443 rule karpctl recorded adding (the karpctl.io/added-ingress-8443 tag names its source). */
export function recordedIngressRestore(w: {
  vpcId?: string
  /** The install a repair opened 8443 for is going too: the repair's rule (karpctl.io/repaired-ingress-8443) goes. */
  repairs?: boolean
  dependsOn: string[]
}): Resource<{ groupId: string; source: string; record: string }[]> {
  const records = [ADDED_INGRESS, ...(w.repairs ? [REPAIRED_INGRESS] : [])]
  return {
    address: 'ec2-ingress.restore',
    kind: 'recorded security group rules',
    name: records.join(', '),
    group: 'Network',
    dependsOn: w.dependsOn,
    desired: { restored: true },
    permissions: [],
    async observe({ aws }) {
      // One record key per listing (moto matches a multi-valued tag-key filter as none).
      const found = await Promise.all(
        records.map(async (record) => {
          const out = await aws.call<ec2.DescribeSecurityGroupsCommandOutput>(
            'ec2',
            'DescribeSecurityGroups',
            {
              Filters: [
                { Name: 'tag-key', Values: [record] },
                ...(w.vpcId ? [{ Name: 'vpc-id', Values: [w.vpcId] }] : []),
              ],
            },
          )
          return (out.SecurityGroups ?? [])
            .filter((g) => tagMap(g.Tags)[record] !== undefined)
            .map((g) => ({ groupId: g.GroupId ?? '', source: tagMap(g.Tags)[record] ?? '', record }))
        }),
      )
      return found.flat()
    },
    verdict: (cur) =>
      !cur?.length
        ? { action: 'unchanged', changes: [], note: 'nothing recorded' }
        : {
            action: 'update',
            changes: cur.map((r) => ({ field: `${r.groupId} ingress`, from: `tcp/8443 from ${r.source}` })),
          },
    async apply({ aws }, cur) {
      for (const r of cur ?? []) {
        await orNull(
          aws.write('ec2', 'RevokeSecurityGroupIngress', {
            GroupId: r.groupId,
            IpPermissions: [
              { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: [{ GroupId: r.source }] },
            ],
          }),
        )
        await aws.write('ec2', 'DeleteTags', { Resources: [r.groupId], Tags: [{ Key: r.record }] })
      }
    },
  }
}

interface Scaled {
  namespace: string
  name: string
  replicas: number
}

/** A cluster-autoscaler karpctl scaled down gets its recorded replicas back. */
export function autoscalerRestore(w: { dependsOn: string[] }): Resource<Scaled[]> {
  return {
    address: 'kube.cluster-autoscaler.restore',
    kind: 'Deployment',
    name: `scaled down by karpctl (${SCALED_FROM})`,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { restored: true },
    permissions: [],
    async observe({ kube }) {
      const l = await kube.get<{
        items: { metadata: { name: string; namespace: string; annotations?: Record<string, string> } }[]
      }>('/apis/apps/v1/deployments')
      return (l?.items ?? [])
        .filter((d) => d.metadata.annotations?.[SCALED_FROM] !== undefined)
        .map((d) => ({
          namespace: d.metadata.namespace,
          name: d.metadata.name,
          replicas: Number(d.metadata.annotations?.[SCALED_FROM]),
        }))
    },
    verdict: (cur) =>
      !cur?.length
        ? { action: 'unchanged', changes: [], note: 'nothing recorded' }
        : {
            action: 'update',
            changes: cur.map((d) => ({
              field: `${d.namespace}/${d.name} replicas`,
              from: 0,
              to: d.replicas,
            })),
          },
    async apply({ kube }, cur) {
      for (const d of cur ?? [])
        await kube.write(
          'PATCH',
          `/apis/apps/v1/namespaces/${d.namespace}/deployments/${d.name}`,
          { metadata: { annotations: { [SCALED_FROM]: null } }, spec: { replicas: d.replicas } },
          'application/merge-patch+json',
        )
    },
  }
}

interface Orphans {
  instances: string[]
  launchTemplates: string[]
  instanceProfiles: { name: string; roles: string[] }[]
}

/** Instances, launch templates and instance profiles Karpenter tagged for this cluster; deleted only on --sweep. */
export function orphanSweep(w: {
  clusterName: string
  sweep: boolean
  dependsOn: string[]
}): Resource<Orphans> {
  const c = w.clusterName
  return {
    address: 'sweep.karpenter-orphans',
    kind: "Karpenter's leftovers",
    name: `tagged for cluster ${c}`,
    group: 'Sweep',
    dependsOn: w.dependsOn,
    desired: { sweep: w.sweep },
    permissions: [],
    async observe({ aws }) {
      const byCluster = [
        [
          { Name: 'tag:eks:eks-cluster-name', Values: [c] },
          { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
        ],
        [
          { Name: `tag:kubernetes.io/cluster/${c}`, Values: ['owned'] },
          { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
        ],
        [{ Name: 'tag:karpenter.k8s.aws/cluster', Values: [c] }],
      ]
      const [instances, templates, profiles] = await Promise.all([
        Promise.all(
          byCluster.map((f) =>
            aws.call<ec2.DescribeInstancesCommandOutput>('ec2', 'DescribeInstances', {
              Filters: [
                ...f,
                { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
              ],
            }),
          ),
        ),
        Promise.all(
          byCluster.map((f) =>
            aws.call<ec2.DescribeLaunchTemplatesCommandOutput>('ec2', 'DescribeLaunchTemplates', {
              Filters: f,
            }),
          ),
        ),
        aws.all<iam.ListInstanceProfilesCommandOutput, iam.InstanceProfile>(
          'iam',
          'ListInstanceProfiles',
          {},
          'Marker',
          (o) => ({ items: o.InstanceProfiles, next: o.IsTruncated ? o.Marker : undefined }),
        ),
      ])
      // Karpenter v1 names the profiles it makes <cluster>_<hash> and tags them with the cluster and its EC2NodeClass.
      const mine = await Promise.all(
        profiles
          .filter((p) => (p.InstanceProfileName ?? '').startsWith(`${c}_`))
          .map(async (p) => {
            const t = await aws.call<iam.ListInstanceProfileTagsCommandOutput>(
              'iam',
              'ListInstanceProfileTags',
              { InstanceProfileName: p.InstanceProfileName },
            )
            const tags = tagMap(t.Tags)
            return tags[`kubernetes.io/cluster/${c}`] === 'owned' && tags['karpenter.k8s.aws/ec2nodeclass']
              ? [{ name: p.InstanceProfileName ?? '', roles: (p.Roles ?? []).map((r) => r.RoleName ?? '') }]
              : []
          }),
      )
      return {
        instances: [
          ...new Set(
            instances.flatMap((o) =>
              (o.Reservations ?? []).flatMap((r) => (r.Instances ?? []).map((i) => i.InstanceId ?? '')),
            ),
          ),
        ],
        launchTemplates: [
          ...new Set(
            templates.flatMap((o) => (o.LaunchTemplates ?? []).map((t) => t.LaunchTemplateId ?? '')),
          ),
        ],
        instanceProfiles: mine.flat(),
      }
    },
    verdict(cur) {
      const found = [
        ...(cur?.instances ?? []),
        ...(cur?.launchTemplates ?? []),
        ...(cur?.instanceProfiles ?? []).map((p) => p.name),
      ]
      if (found.length === 0) return { action: 'unchanged', changes: [], note: 'none found' }
      const changes = found.map((id) => ({ field: 'orphan', from: id }))
      return w.sweep
        ? { action: 'delete', changes }
        : {
            action: 'unchanged',
            changes,
            note: `${found.length} found: pass --sweep to delete them (${found.join(', ')})`,
          }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      if (cur.instances.length) await aws.write('ec2', 'TerminateInstances', { InstanceIds: cur.instances })
      for (const id of cur.launchTemplates)
        await orNull(aws.write('ec2', 'DeleteLaunchTemplate', { LaunchTemplateId: id }))
      for (const p of cur.instanceProfiles) {
        for (const r of p.roles)
          await orNull(
            aws.write('iam', 'RemoveRoleFromInstanceProfile', { InstanceProfileName: p.name, RoleName: r }),
          )
        await orNull(aws.write('iam', 'DeleteInstanceProfile', { InstanceProfileName: p.name }))
      }
    },
  }
}
