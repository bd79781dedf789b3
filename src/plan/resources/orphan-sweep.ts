// What Karpenter launched for this cluster and left behind (instances, launch templates, instance
// profiles): listed always, deleted only on --sweep.
import type * as ec2 from '@aws-sdk/client-ec2'
import type * as iam from '@aws-sdk/client-iam'
import type { Resource } from '../types.js'
import { orNull, tagMap } from './absent.js'

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
