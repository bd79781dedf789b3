import { KARPENTER_CHART } from './lib/compat.js'
import { need } from './lib/facts.js'
import type { Check } from './types.js'

const ECR_PUBLIC = 'public.ecr.aws'

/** Registry keys may carry a scheme or a path (`https://public.ecr.aws`, `public.ecr.aws/karpenter`). */
const isEcrPublic = (registry: string) =>
  registry
    .replace(/^[a-z]+:\/\//i, '')
    .split('/')[0]
    ?.toLowerCase() === ECR_PUBLIC

export const helmRegistryAuth: Check = {
  meta: {
    id: 'helm-registry-auth',
    title: 'No stale public.ecr.aws credentials in the local Helm registry config',
    category: 'local',
    severity: 'warning',
    docs: `The Karpenter chart (${KARPENTER_CHART}) is public: pulls need no login. A stored ECR Public token expires after 12 hours, and Helm keeps sending it, so pulls fail with "403 Forbidden" until the entry is removed.`,
  },
  run(facts) {
    const config = need(facts.local.helmRegistry)
    if (!config) {
      return [
        {
          status: 'pass',
          message: 'no Helm registry config on this machine: public.ecr.aws is pulled anonymously',
        },
      ]
    }
    const stored = config.registries.filter(isEcrPublic)
    // Only registry names are in facts, never the credentials themselves.
    const evidence = { path: config.path, registries: config.registries }
    if (stored.length === 0) {
      return [
        {
          status: 'pass',
          subject: config.path,
          message: `${config.path} stores no credentials for ${ECR_PUBLIC}: the chart is pulled anonymously`,
          evidence,
        },
      ]
    }
    return [
      {
        status: 'warn',
        subject: config.path,
        message: `${config.path} stores credentials for ${stored.join(', ')}: once that ECR Public token expires (12 h), helm pull/install of ${KARPENTER_CHART} fails with 403 Forbidden`,
        evidence: { ...evidence, ecrPublicEntries: stored },
        fix: {
          summary: `log out so Helm pulls anonymously (or refresh the token with: aws ecr-public get-login-password --region us-east-1 | helm registry login --username AWS --password-stdin ${ECR_PUBLIC})`,
          commands: [`helm registry logout ${ECR_PUBLIC}`, `docker logout ${ECR_PUBLIC}`],
        },
      },
    ]
  },
}
