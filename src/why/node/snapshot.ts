// A node snapshot (karpctl.why-node-facts/v1): the facts of one `why node/…` or `why --nodes` run,
// saved redacted through doctor's writer and read back as untrusted input — the shape every node
// judgement relies on, or one line naming the JSON path that is wrong. Embedded doctor facts are held
// to doctor's own schema.
import { InputError, quote } from '../../errors.js'
import { jsonPath, parseSnapshot, saveSnapshot } from '../../facts/snapshot.js'
import { badRead, checkEnvelope, instanceType } from '../snapshot.js'
import type { NodeFacts } from './types.js'

export const NODE_FACTS_SCHEMA = 'karpctl.why-node-facts/v1'

export const saveNodeSnapshot = (path: string, facts: NodeFacts) => saveSnapshot(path, facts)

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** A Node or NodeClaim: `metadata.name`, and `status`/`spec` objects when present (the judgements read into them). */
const kubeObject = (item: unknown): (string | number)[] | null => {
  if (!isObj(item) || !isObj(item.metadata) || typeof item.metadata.name !== 'string')
    return ['metadata', 'name']
  for (const k of ['spec', 'status'] as const) if (item[k] !== undefined && !isObj(item[k])) return [k]
  return null
}

const event = (item: unknown): (string | number)[] | null =>
  kubeObject(item) ?? (isObj((item as Record<string, unknown>).involvedObject) ? null : ['involvedObject'])

export const isNodeFacts = (data: unknown): boolean => isObj(data) && data.schema === NODE_FACTS_SCHEMA

export async function checkNodeFacts(raw: unknown, path: string): Promise<NodeFacts> {
  const name = quote(path)
  const data = checkEnvelope(raw, path, NODE_FACTS_SCHEMA, 'node')
  const meta = data.meta
  let bad: (string | number)[] | null = null
  if (
    !isObj(meta) ||
    typeof meta.clusterName !== 'string' ||
    typeof meta.region !== 'string' ||
    !isObj(meta.selector)
  )
    bad = ['meta']
  else if (!['node', 'nodeclaim', 'nodes'].includes(String(meta.selector.kind)))
    bad = ['meta', 'selector', 'kind']
  else if (meta.selector.kind !== 'nodes' && typeof meta.selector.name !== 'string')
    bad = ['meta', 'selector', 'name']
  else if (!isObj(data.kube)) bad = ['kube']
  else {
    bad =
      badRead(data.kube.nodePools, ['kube', 'nodePools']) ??
      badRead(data.kube.nodeClasses, ['kube', 'nodeClasses'])
    bad ??= badRead(data.nodes, ['nodes'], true, kubeObject)
    bad ??= badRead(data.nodeClaims, ['nodeClaims'], true, kubeObject)
    bad ??= badRead(data.pods, ['pods'], true, kubeObject)
    bad ??= badRead(data.pdbs, ['pdbs'], true, kubeObject)
    bad ??= badRead(data.events, ['events'], true, event)
    if (data.controllerLog !== undefined) {
      bad ??= badRead(data.controllerLog, ['controllerLog'], false)
      const log = data.controllerLog as { ok?: boolean; value?: unknown }
      if (!bad && log.ok) {
        if (!isObj(log.value)) bad = ['controllerLog', 'value']
        else
          for (const [k, lines] of Object.entries(log.value))
            if (
              !Array.isArray(lines) ||
              lines.some((l) => !isObj(l) || typeof l.time !== 'string' || typeof l.message !== 'string')
            )
              bad ??= ['controllerLog', 'value', k]
      }
    }
    if (data.instanceTypes !== undefined)
      bad ??= badRead(data.instanceTypes, ['instanceTypes'], true, instanceType)
    if (data.bootLogs !== undefined) {
      if (!isObj(data.bootLogs)) bad ??= ['bootLogs']
      else
        for (const [k, v] of Object.entries(data.bootLogs)) {
          bad ??= badRead(v, ['bootLogs', k], false)
          const value = isObj(v) && v.ok === true ? v.value : undefined
          if (
            v &&
            (v as { ok?: unknown }).ok === true &&
            !(
              isObj(value) &&
              typeof value.instanceId === 'string' &&
              Array.isArray(value.lines) &&
              value.lines.every((l) => typeof l === 'string')
            )
          )
            bad ??= ['bootLogs', k, 'value']
        }
    }
  }
  if (bad)
    throw new InputError(
      `snapshot ${name} is not a valid node snapshot at ${jsonPath(bad)}`,
      'SNAPSHOT_INVALID',
    )
  // doctor's facts keep doctor's schema: the same validator doctor --snapshot uses.
  if (data.doctor !== undefined) await parseSnapshot(JSON.stringify(data.doctor), `${path}#doctor`)
  return data as unknown as NodeFacts
}
