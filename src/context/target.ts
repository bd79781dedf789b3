// Which cluster and region a run is about: flags, then the environment, then an EKS kube context
// (`aws eks update-kubeconfig` names contexts by the cluster ARN, which carries both).
import { InputError, quote } from '../errors.js'
import { currentContextName } from './kubeconfig.js'

export interface Target {
  clusterName: string
  region: string
}

const EKS_ARN = /^arn:aws[\w-]*:eks:([a-z0-9-]+):\d{12}:cluster\/([\w-]+)$/

export function resolveTarget(
  flags: { cluster?: string; region?: string; 'kube-context'?: string },
  env: NodeJS.ProcessEnv = process.env,
): Target {
  let context: string | undefined
  try {
    context = flags['kube-context'] ?? currentContextName()
  } catch {
    context = undefined
  }
  const fromArn = context ? EKS_ARN.exec(context) : null
  const clusterName = flags.cluster ?? fromArn?.[2]
  const region = flags.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? fromArn?.[1]
  if (!clusterName) {
    throw new InputError('which cluster? pass --cluster <name> (or set KARPCTL_CLUSTER)', 'MISSING_CLUSTER')
  }
  if (!/^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/.test(clusterName)) {
    throw new InputError(
      `${quote(clusterName)} is not a valid EKS cluster name (letters, digits, - and _, up to 100)`,
      'INVALID_CLUSTER',
    )
  }
  if (!region) throw new InputError('which region? pass --region (or set AWS_REGION)', 'MISSING_REGION')
  return { clusterName, region }
}
