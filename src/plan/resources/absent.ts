// What every teardown resource shares: the verdict for what is already gone or is not karpctl's (with the
// command its own tool removes it with), a read that finds nothing as null, a removal of what is already
// gone as done, and tags as a map.
import { isNotFound } from '../../context/aws.js'
import { KubeApiError } from '../../context/kube.js'
import { isOwned } from '../compare.js'
import type { Verdict } from '../types.js'

export const tagMap = (t?: { Key?: string; Value?: string }[]) =>
  Object.fromEntries((t ?? []).map((x) => [x.Key ?? '', x.Value ?? '']))
export const gone: Verdict = { action: 'unchanged', changes: [], note: 'already gone' }

/** Deleted when it carries karpctl's ownership tags; otherwise kept, naming the tool that made it. */
export const ownedVerdict = (
  cur: { tags: Record<string, string> } | null,
  ownership: Record<string, string>,
): Verdict =>
  !cur
    ? gone
    : isOwned(cur.tags, ownership)
      ? { action: 'delete', changes: [] }
      : { action: 'unchanged', changes: [], note: ownerHint(cur.tags) }

export async function orNull<T>(p: Promise<T>): Promise<T | null> {
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

/** The tags a give-back removes, each with the value it has. */
export const removedTags = (tags: Record<string, string>, keys: string[]) =>
  keys.map((k) => ({ field: `tags.${k}`, from: tags[k] }))

/** A delete or detach of what is already gone (in AWS or Kubernetes) is done, not failed. */
export const ignoreMissing = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (err) {
    if (!isNotFound(err) && !(err instanceof KubeApiError && err.status === 404)) throw err
  }
}
