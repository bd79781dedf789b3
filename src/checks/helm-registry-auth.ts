import type { HelmRegistryConfig } from '../facts/types.js'
import { KARPENTER_CHART } from './lib/compat.js'
import { need } from './lib/facts.js'
import type { Check, Finding } from './types.js'

const ECR_PUBLIC = 'public.ecr.aws'

/** Registry keys may carry a scheme or a path (`https://public.ecr.aws`, `public.ecr.aws/karpenter`). */
const isEcrPublic = (registry: string) =>
  registry
    .replace(/^[a-z]+:\/\//i, '')
    .split('/')[0]
    ?.toLowerCase() === ECR_PUBLIC

const stale = (config: HelmRegistryConfig, where: string, commands: string[]): Finding => {
  const stored = config.registries.filter(isEcrPublic)
  return {
    status: 'warn',
    subject: config.path,
    message: `${config.path} stores credentials for ${stored.join(', ')}${where}: once that ECR Public token expires (12 h), helm pull/install of ${KARPENTER_CHART} fails with 403 Forbidden`,
    evidence: { path: config.path, registries: config.registries, ecrPublicEntries: stored },
    fix: {
      summary: `log out so Helm pulls anonymously (or refresh the token with: aws ecr-public get-login-password --region us-east-1 | helm registry login --username AWS --password-stdin ${ECR_PUBLIC})`,
      commands,
    },
  }
}

export const helmRegistryAuth: Check = {
  meta: {
    id: 'helm-registry-auth',
    title: 'No stale public.ecr.aws credentials in the local Helm registry config',
    category: 'local',
    severity: 'warning',
    docs: `The Karpenter chart (${KARPENTER_CHART}) is public: pulls need no login. A stored ECR Public token expires after 12 hours, and Helm keeps sending it, so pulls fail with "403 Forbidden" until the entry is removed. Helm reads its own registry config, then Docker's for a registry it has no entry for.`,
  },
  run(facts) {
    const config = need(facts.local.helmRegistry)
    if (config?.registries.some(isEcrPublic))
      return [stale(config, '', [`helm registry logout ${ECR_PUBLIC}`, `docker logout ${ECR_PUBLIC}`])]
    // Helm's own config has no entry: it sends what Docker's holds (`docker login public.ecr.aws`).
    // Snapshots from before Docker's config was read have no such read: judged on Helm's alone.
    const read = facts.local.dockerRegistry
    const docker = read ? need(read) : null
    if (docker?.registries.some(isEcrPublic))
      return [
        stale(docker, `, which Helm sends when its own registry config has none`, [
          `docker logout ${ECR_PUBLIC}`,
        ]),
      ]
    if (!config) {
      return [
        {
          status: 'pass',
          message: `no Helm registry config on this machine${docker ? ` and no ${ECR_PUBLIC} entry in ${docker.path}` : ''}: ${ECR_PUBLIC} is pulled anonymously`,
        },
      ]
    }
    return [
      {
        status: 'pass',
        subject: config.path,
        message: `${config.path} stores no credentials for ${ECR_PUBLIC}: the chart is pulled anonymously`,
        evidence: { path: config.path, registries: config.registries },
      },
    ]
  },
}
