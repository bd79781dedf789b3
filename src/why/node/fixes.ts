// The kubectl commands that let a node go, or keep it. Values come from the cluster, so every
// command is quoted for a POSIX shell.
import { shellQuote } from '../../checks/lib/facts.js'
import type { Fix } from '../../checks/types.js'

const q = shellQuote
const json = (v: unknown) => q(JSON.stringify(v))

export const patchNodePool = (pool: string, patch: unknown): string =>
  `kubectl patch nodepool ${q(pool)} --type merge -p ${json(patch)}`

export const jsonPatchNodePool = (pool: string, ops: unknown[]): string =>
  `kubectl patch nodepool ${q(pool)} --type json -p ${json(ops)}`

export const annotate = (
  kind: 'node' | 'nodeclaim' | 'pod',
  name: string,
  set: boolean,
  ns?: string,
): string =>
  `kubectl${ns ? ` -n ${q(ns)}` : ''} annotate ${kind} ${q(name)} ${set ? 'karpenter.sh/do-not-disrupt=true' : 'karpenter.sh/do-not-disrupt-'}`

/** Keep the node: Karpenter's own opt-out, honoured by every graceful method (not expiration or interruption). */
export const keepNode = (node: string): Fix => ({
  summary: `keep it: annotate node ${node} with karpenter.sh/do-not-disrupt=true (graceful disruption only)`,
  commands: [annotate('node', node, true)],
})

/** A budget of 0 nodes for one reason, appended to the NodePool's budgets: holds that method back. */
export const holdReason = (pool: string, reason: string): Fix => ({
  summary: `keep its nodes: add a budget of 0 nodes for reason ${reason} to NodePool ${pool} (spec.disruption.budgets)`,
  commands: [
    jsonPatchNodePool(pool, [
      { op: 'add', path: '/spec/disruption/budgets/-', value: { nodes: '0', reasons: [reason] } },
    ]),
  ],
})
