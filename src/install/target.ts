// Which cluster and region to install on: flags, the environment, the EKS kube context — and, in a
// terminal, a question (the region's clusters to choose from) for what none of them gives.
import type * as eks from '@aws-sdk/client-eks'
import { Aws } from '../context/aws.js'
import { CallLog, Limiter, Memo } from '../context/limiter.js'
import { resolveTarget, type Target } from '../context/target.js'
import { InputError, KarpctlError } from '../errors.js'
import type { Prompter } from '../context/prompter.js'
import { visible } from '../report/terminal.js'

type TargetFlags = { cluster?: string; region?: string; profile?: string; 'kube-context'?: string }

export async function resolveInstallTarget(flags: TargetFlags, prompter: Prompter | null): Promise<Target> {
  try {
    return resolveTarget(flags)
  } catch (err) {
    if (!prompter || !(err instanceof InputError)) throw err
    if (err.code !== 'MISSING_CLUSTER' && err.code !== 'MISSING_REGION') throw err
  }
  let region = flags.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION
  region ??= await prompter.input({ message: 'AWS region', default: 'us-west-2' })
  let cluster = flags.cluster
  if (!cluster) {
    const aws = new Aws({ region, profile: flags.profile }, new Limiter(2), new Memo(), new CallLog())
    let names: string[] = []
    try {
      names = (await aws.call<eks.ListClustersCommandOutput>('eks', 'ListClusters', {})).clusters ?? []
    } catch (e) {
      if (e instanceof KarpctlError) throw e
    } finally {
      aws.destroy()
    }
    cluster =
      names.length > 0
        ? await prompter.select({
            message: `EKS cluster (${region})`,
            // A name from AWS is shown on one line with its controls visible; the choice keeps it as is.
            choices: names.map((n) => ({ name: visible(n), value: n })),
          })
        : await prompter.input({ message: `EKS cluster name (none listed in ${region})` })
  }
  return resolveTarget({ ...flags, cluster, region })
}
