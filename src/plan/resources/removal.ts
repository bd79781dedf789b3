// Resources whose desired state is "gone": deleted only when karpctl's ownership marks prove karpctl made
// them (tags, labels, its record in aws-auth); anything else is kept and the plan says why.
import type * as eks from '@aws-sdk/client-eks'
import type * as iam from '@aws-sdk/client-iam'
import { isNotFound, toReadFailure, type Aws } from '../../context/aws.js'
import { KubeApiError } from '../../context/kube.js'
import { roleFacts } from '../../facts/collect-iam.js'
import { stackKeptNote } from '../../facts/collect-owners.js'
import { isOwned } from '../compare.js'
import { leafChanges } from '../diff.js'
import type { ApplyEnv, Resource } from '../types.js'
import { giveBack, nameOf, nothingToGiveBack, type AdoptedRoleState, type GiveBack } from './adopted-role.js'
import { ADDED_MAP_ROLES } from './aws-auth.js'
import { ownerHint } from './absent.js'
import { mapRoles, mapRolesProblem, withoutMapRole } from './map-roles.js'

const ignoreMissing = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (err) {
    if (!isNotFound(err) && !(err instanceof KubeApiError && err.status === 404)) throw err
  }
}

interface RoleState extends AdoptedRoleState {
  /** The owning stack's note, when CloudFormation says one owns it. */
  owner?: string
  attachedArns: string[]
  inlineNames: string[]
  profiles: string[]
}

/**
 * A role karpctl created is deleted; a role it adopted (or changed with a record, as doctor --fix does) is
 * kept and gets back what the records list; anything else is kept untouched.
 */
export function iamRoleAbsent(w: {
  address: string
  name: string
  ownership: Record<string, string>
  dependsOn: string[]
  /** Said when the role is kept as another tool's (e.g. the CloudFormation stack that owns it). */
  keptNote?: string
  /** The install doctor --fix repaired goes too: its recorded repairs on the role are given back. */
  repairs?: boolean
}): Resource<RoleState> {
  return {
    address: w.address,
    kind: 'IAM role',
    name: w.name,
    group: 'IAM',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      const r = await roleFacts(aws, w.name, false)
      if (!r.ok) throw Object.assign(new Error(r.error.message), { name: r.error.code })
      if (!r.value) return null
      const profiles = await aws.call<iam.ListInstanceProfilesForRoleCommandOutput>(
        'iam',
        'ListInstanceProfilesForRole',
        { RoleName: w.name },
      )
      const inline = r.value.inline.ok ? r.value.inline.value : []
      const owner = isOwned(r.value.role.tags, w.ownership) ? undefined : await stackKeptNote(aws, w.name)
      const attachedArns = r.value.attached.ok ? r.value.attached.value.map((p) => p.arn) : []
      return {
        owner,
        tags: r.value.role.tags,
        trust: r.value.role.trust,
        attached: attachedArns,
        attachedArns,
        inline: Object.fromEntries(inline.map((p) => [p.name, p.document])),
        inlineNames: inline.map((p) => p.name),
        profiles: (profiles.InstanceProfiles ?? []).map((p) => p.InstanceProfileName ?? ''),
      }
    },
    verdict(cur) {
      if (!cur) return { action: 'unchanged', changes: [], note: 'already gone' }
      if (!isOwned(cur.tags, w.ownership)) {
        const g = giveBack(cur, w.repairs)
        const kept = w.keptNote ?? cur.owner ?? ownerHint(cur.tags)
        if (nothingToGiveBack(g)) return { action: 'unchanged', changes: [], note: kept }
        return {
          action: 'update',
          changes: [
            ...g.deleteInline.map((p) => ({ field: 'inline policy (added by karpctl)', from: p })),
            ...g.detach.map((p) => ({ field: 'attached policy (by karpctl)', from: nameOf(p) })),
            // The trust statements karpctl added (ADOPTED_SID), each shown as it goes.
            ...(g.trust ? leafChanges(cur.trust, g.trust, 'trust') : []),
            ...g.untag.map((k) => ({ field: `tags.${k}`, from: cur.tags[k] })),
          ],
          note: `${kept}; karpctl's recorded changes given back`,
        }
      }
      return {
        action: 'delete',
        changes: [
          ...cur.profiles.map((p) => ({ field: 'in instance profile', from: p })),
          ...cur.attachedArns.map((p) => ({ field: 'attached policy', from: nameOf(p) })),
          ...cur.inlineNames.map((p) => ({ field: 'inline policy', from: p })),
        ],
      }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      if (!isOwned(cur.tags, w.ownership)) return giveBackRole(aws, w.name, giveBack(cur, w.repairs))
      for (const p of cur.profiles)
        await ignoreMissing(
          aws.write('iam', 'RemoveRoleFromInstanceProfile', { InstanceProfileName: p, RoleName: w.name }),
        )
      for (const arn of cur.attachedArns)
        await ignoreMissing(aws.write('iam', 'DetachRolePolicy', { RoleName: w.name, PolicyArn: arn }))
      for (const name of cur.inlineNames)
        await ignoreMissing(aws.write('iam', 'DeleteRolePolicy', { RoleName: w.name, PolicyName: name }))
      await ignoreMissing(aws.write('iam', 'DeleteRole', { RoleName: w.name }))
    },
  }
}

/** The changes first, the records last: a run killed in between still finds what is left to give back. */
async function giveBackRole(aws: Aws, name: string, g: GiveBack) {
  for (const p of g.deleteInline)
    await ignoreMissing(aws.write('iam', 'DeleteRolePolicy', { RoleName: name, PolicyName: p }))
  for (const arn of g.detach)
    await ignoreMissing(aws.write('iam', 'DetachRolePolicy', { RoleName: name, PolicyArn: arn }))
  if (g.trust)
    await aws.write('iam', 'UpdateAssumeRolePolicy', {
      RoleName: name,
      PolicyDocument: JSON.stringify(g.trust),
    })
  if (g.untag.length) await aws.write('iam', 'UntagRole', { RoleName: name, TagKeys: g.untag })
}

export function accessEntryAbsent(w: {
  clusterName: string
  principalArn: string
  ownership: Record<string, string>
  dependsOn: string[]
}): Resource<{ tags: Record<string, string> }> {
  return {
    address: 'eks-access-entry.remove',
    kind: 'EKS access entry',
    name: w.principalArn,
    group: 'Cluster access',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      try {
        const out = await aws.call<eks.DescribeAccessEntryCommandOutput>('eks', 'DescribeAccessEntry', {
          clusterName: w.clusterName,
          principalArn: w.principalArn,
        })
        return { tags: out.accessEntry?.tags ?? {} }
      } catch (err) {
        // An endpoint without access entries cannot hold one karpctl made.
        if (isNotFound(err) || toReadFailure(err, '').kind === 'unsupported') return null
        throw err
      }
    },
    verdict(cur) {
      if (!cur) return { action: 'unchanged', changes: [], note: 'already gone' }
      if (!isOwned(cur.tags, w.ownership))
        return { action: 'unchanged', changes: [], note: 'kept: karpctl did not make it' }
      return { action: 'delete', changes: [] }
    },
    async apply({ aws }) {
      await ignoreMissing(
        aws.write('eks', 'DeleteAccessEntry', { clusterName: w.clusterName, principalArn: w.principalArn }),
      )
    },
  }
}

const AWS_AUTH = '/api/v1/namespaces/kube-system/configmaps/aws-auth'
interface ConfigMap {
  metadata: { annotations?: Record<string, string> }
  data?: Record<string, string>
}
const added = (cm: ConfigMap | null) =>
  JSON.parse(cm?.metadata.annotations?.[ADDED_MAP_ROLES] ?? '[]') as string[]
const mapped = (cm: ConfigMap | null) => mapRoles(cm?.data?.mapRoles)

export function awsAuthEntryAbsent(w: { roleArn: string; dependsOn: string[] }): Resource<ConfigMap> {
  return {
    address: 'aws-auth.remove',
    kind: 'aws-auth mapping',
    name: w.roleArn,
    group: 'Cluster access',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    observe: ({ kube }) => kube.get<ConfigMap>(AWS_AUTH),
    verdict(cm) {
      const problem = mapRolesProblem(cm?.data?.mapRoles)
      if (problem)
        return {
          action: 'unchanged',
          changes: [],
          note: `kept: aws-auth mapRoles ${problem}, so karpctl cannot read it; if it maps this role for karpctl (${ADDED_MAP_ROLES}), remove that entry by hand (\`kubectl edit configmap aws-auth -n kube-system\`)`,
        }
      if (!mapped(cm).some((r) => r.rolearn === w.roleArn)) {
        // A record that outlived its entry (removed by hand) would make a later hand-made entry of the
        // same role look like karpctl's: it goes too.
        if (added(cm).includes(w.roleArn))
          return {
            action: 'update',
            changes: [{ field: ADDED_MAP_ROLES, from: w.roleArn }],
            note: 'the mapping is already gone; its record goes',
          }
        return { action: 'unchanged', changes: [], note: 'already gone' }
      }
      if (!added(cm).includes(w.roleArn))
        return {
          action: 'unchanged',
          changes: [],
          note: `kept: not in ${ADDED_MAP_ROLES}, so karpctl did not add it`,
        }
      return { action: 'delete', changes: [] }
    },
    async apply({ kube }) {
      // Read-modify-write on the live object; a concurrent writer's 409 is retried by the executor.
      const cm = await kube.fresh<ConfigMap & { metadata: Record<string, unknown> }>(AWS_AUTH)
      if (!cm || !added(cm).includes(w.roleArn)) return
      const rest = added(cm).filter((a) => a !== w.roleArn)
      // The record goes with its last entry: aws-auth is left as it was before karpctl.
      const annotations: Record<string, string> = {
        ...cm.metadata.annotations,
        [ADDED_MAP_ROLES]: JSON.stringify(rest),
      }
      if (rest.length === 0) delete annotations[ADDED_MAP_ROLES]
      const still = mapped(cm).some((r) => r.rolearn === w.roleArn)
      await kube.write('PUT', AWS_AUTH, {
        ...cm,
        metadata: { ...cm.metadata, annotations },
        data: still ? { ...cm.data, mapRoles: withoutMapRole(cm.data?.mapRoles, w.roleArn) } : cm.data,
      })
    },
  }
}

interface Labelled {
  metadata: { labels?: Record<string, string>; deletionTimestamp?: string; finalizers?: string[] }
}

/**
 * A Kubernetes object karpctl labelled as its own; `waitGone` lists what must disappear after it (nodes);
 * `waitSelf` waits for the object itself, until its finalizers are lifted (an EC2NodeClass: Karpenter
 * deletes its instance profile first, and must still run to do so).
 */
export function kubeObjectAbsent(w: {
  address: string
  kind: string
  name: string
  path: string
  labels: Record<string, string>
  dependsOn: string[]
  waitGone?: { paths: string[]; timeoutMs: number; what: string }
  waitSelf?: { timeoutMs: number; who: string; check?: string }
}): Resource<Labelled> {
  return {
    address: w.address,
    kind: w.kind,
    name: w.name,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    observe: ({ kube }) => kube.get<Labelled>(w.path),
    verdict(cur) {
      if (!cur) return { action: 'unchanged', changes: [], note: 'already gone' }
      if (!isOwned(cur.metadata.labels ?? {}, w.labels))
        return { action: 'unchanged', changes: [], note: "kept: not labelled as karpctl's" }
      return {
        action: 'delete',
        changes: [],
        note: w.waitGone
          ? `waits for its ${w.waitGone.what} to go`
          : w.waitSelf
            ? `waits until it is gone (${w.waitSelf.who} lifts its finalizers)`
            : undefined,
      }
    },
    async apply({ kube, sleep, progress }, cur) {
      if (cur && !cur.metadata.deletionTimestamp) await ignoreMissing(kube.write('DELETE', w.path))
      if (w.waitSelf) await waitSelf(kube, w, w.waitSelf, sleep, progress)
      if (!w.waitGone) return
      const t0 = Date.now()
      for (;;) {
        const left = (
          await Promise.all(w.waitGone.paths.map((p) => kube.fresh<{ items?: unknown[] }>(p)))
        ).reduce((n, l) => n + (l?.items?.length ?? 0), 0)
        if (left === 0) return
        if (Date.now() - t0 > w.waitGone.timeoutMs)
          throw new Error(
            `${left} ${w.waitGone.what} of ${w.kind} ${w.name} still draining after ${Math.round(w.waitGone.timeoutMs / 1000)} s: run the same command again to keep waiting`,
          )
        progress?.(`${w.kind} ${w.name}: waiting for ${left} ${w.waitGone.what} to go`)
        await sleep(2000)
      }
    },
  }
}

/** An EC2NodeClass's wait: Karpenter lifts its finalizer (the controller deployment named as karpctl installs it). */
export const karpenterLifts = (timeoutMs: number, namespace?: string) => ({
  timeoutMs,
  who: 'the Karpenter controller',
  ...(namespace ? { check: `kubectl -n ${namespace} get deployment karpenter` } : {}),
})

/** Until the object is gone, bounded: a line of progress every poll, the way on at the bound. */
async function waitSelf(
  kube: ApplyEnv['kube'],
  w: { kind: string; name: string; path: string },
  o: { timeoutMs: number; who: string; check?: string },
  sleep: ApplyEnv['sleep'],
  progress: ApplyEnv['progress'],
): Promise<void> {
  const t0 = Date.now()
  for (;;) {
    const left = await kube.fresh<Labelled>(w.path)
    if (!left) return
    const finalizers = left.metadata?.finalizers ?? []
    const held = finalizers.length ? ` (finalizers ${finalizers.join(', ')})` : ''
    if (Date.now() - t0 > o.timeoutMs)
      throw new Error(
        `${w.kind} ${w.name} still there after ${Math.round(o.timeoutMs / 1000)} s${held}: ${o.who} lifts them once it has cleaned up; check that it runs${o.check ? ` (\`${o.check}\`)` : ''}, then run the same command again to keep waiting`,
      )
    progress?.(`${w.kind} ${w.name}: waiting for it to go${held}`)
    await sleep(2000)
  }
}
