// The wizard's answers as the one command that gives the same install without a terminal (CI, a
// runbook, the next cluster): every choice spelled out, so it does not depend on the defaults of the day.
import type { InstallChoices, InstallFlags } from './wizard.js'

/** A word as a POSIX shell reads it back unchanged. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`
}

export function equivalentCommand(
  bin: string,
  target: { clusterName: string; region: string; profile?: string; kubeContext?: string },
  c: InstallChoices,
  /** Subnets and security groups are spelled out only when given: by default they follow the cluster. */
  given: Pick<InstallFlags, 'subnet-ids' | 'security-group-ids'> = {},
): string {
  const args: string[] = ['install', '--cluster', target.clusterName, '--region', target.region]
  if (target.profile) args.push('--profile', target.profile)
  if (target.kubeContext) args.push('--kube-context', target.kubeContext)
  args.push('--karpenter-version', c.karpenterVersion, '--namespace', c.namespace, '--identity', c.identity)
  args.push('--node-role', c.nodeRole.create ? 'create' : c.nodeRole.arn)
  if (c.nodeRole.create) args.push('--node-access', c.access)
  args.push(c.interruption ? '--interruption' : '--no-interruption')
  args.push(
    '--capacity-types',
    c.nodePool.capacityTypes.join(','),
    '--instance-categories',
    c.nodePool.instanceCategories.join(','),
    '--architectures',
    c.nodePool.architectures.join(','),
    '--cpu-limit',
    String(c.nodePool.cpuLimit),
  )
  if (given['subnet-ids']) args.push('--subnet-ids', c.subnetIds.join(','))
  if (given['security-group-ids']) args.push('--security-group-ids', c.securityGroupIds.join(','))
  if (c.extraValuesFile) args.push('--values', c.extraValuesFile)
  if (c.chartDir) args.push('--chart-dir', c.chartDir)
  if (c.scaleDownClusterAutoscaler) args.push('--scale-down-cluster-autoscaler')
  if (c.adopt) args.push('--adopt')
  args.push('--yes')
  return [bin, ...args].map(shellWord).join(' ')
}
