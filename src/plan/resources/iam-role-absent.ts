// An IAM role on its way out: deleted (its policies and instance profiles first) when karpctl created
// it; given back as the records list when karpctl adopted or repaired it; otherwise kept.
import type * as iam from '@aws-sdk/client-iam'
import type { Aws } from '../../context/aws.js'
import { roleFacts } from '../../facts/collect-iam.js'
import { stackKeptNote } from '../../facts/collect-owners.js'
import { isOwned } from '../compare.js'
import { leafChanges } from '../diff.js'
import type { Resource } from '../types.js'
import { giveBack, nameOf, nothingToGiveBack, type AdoptedRoleState, type GiveBack } from './adopted-role.js'
import { ownerHint, ignoreMissing } from './absent.js'

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
