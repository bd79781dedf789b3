// What a user does after a clean install: prove it launches a node, give a team its own capacity, and
// put a workload on Karpenter's nodes. Printed only when doctor found nothing failing.
import { shellWord } from './command-line.js'

export function nextSteps(
  bin: string,
  target: { clusterName: string; region: string; kubeContext?: string },
  o: { smokeTested: boolean; nodePool: string },
): string[] {
  const where = [
    '--cluster',
    target.clusterName,
    '--region',
    target.region,
    ...(target.kubeContext ? ['--kube-context', target.kubeContext] : []),
  ]
    .map(shellWord)
    .join(' ')
  return [
    'Next steps:',
    ...(o.smokeTested ? [] : [`  prove a node launches:      ${bin} install ${where} --yes --smoke-test`]),
    `  capacity for one team:      ${bin} tenant add <team> ${where}`,
    `  run a workload on it:       spec.template.spec.nodeSelector: { karpenter.sh/nodepool: ${o.nodePool} }`,
    `  check it again any time:    ${bin} doctor ${where}`,
  ]
}
