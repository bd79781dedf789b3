// `doctor --serve` posts each finding that is not a pass as a Kubernetes Event (events.k8s.io/v1) on
// the object it is about: `kubectl describe ec2nodeclass default` shows why its nodes do not come up.
// The same finding seen again is the same Event (its name is a hash of check, object and message), its
// series count raised — not a new Event every interval.
import { createHash } from 'node:crypto'
import type { CheckResult, Finding } from '../checks/types.js'
import type { KubeClient } from '../context/kube.js'
import { KubeApiError } from '../context/kube.js'
import type { Facts, ObjectMeta, Read } from '../facts/types.js'

export const REPORTING_CONTROLLER = 'karpctl.io/doctor'

/** The object an Event is about (events.k8s.io/v1 `regarding`). */
export interface Regarding {
  apiVersion: string
  kind: string
  name: string
  namespace?: string
  uid?: string
}

export interface DoctorEvent {
  apiVersion: 'events.k8s.io/v1'
  kind: 'Event'
  metadata: { name: string; namespace: string; labels: Record<string, string> }
  eventTime: string
  reportingController: string
  reportingInstance: string
  action: string
  reason: string
  regarding: Regarding
  note: string
  type: 'Warning'
  series?: { count: number; lastObservedTime: string }
}

const REASON: Partial<Record<Finding['status'], string>> = {
  fail: 'CheckFailed',
  warn: 'CheckWarning',
  unknown: 'CheckUnknown',
}

/** The API's MicroTime: RFC 3339 with six fractional digits. */
export const microTime = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')

/** A note is at most 1 KiB: longer ones are cut on a character boundary, with an ellipsis. */
export function clipNote(text: string, max = 1024): string {
  if (Buffer.byteLength(text) <= max) return text
  let cut = text
  while (Buffer.byteLength(`${cut}…`) > max) cut = cut.slice(0, -1)
  return `${cut}…`
}

/**
 * The object a finding is about: the EC2NodeClass or NodePool its subject names (`EC2NodeClass/x`, or
 * the bare name of one the cluster has), else the controller Deployment; null when there is none (no
 * Karpenter found): such findings are on /metrics only.
 */
export function regardingOf(finding: Finding, facts: Facts): Regarding | null {
  const subject = finding.subject ?? ''
  const k = facts.kube
  const nodeClass = named(subject, 'EC2NodeClass', k.nodeClasses)
  if (nodeClass) return { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', ...nodeClass }
  const nodePool = named(subject, 'NodePool', k.nodePools)
  if (nodePool) return { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', ...nodePool }
  const d = k.deployment.ok ? k.deployment.value : null
  if (!d) return null
  const namespace = d.metadata.namespace ?? 'kube-system'
  return { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, namespace, ...uidOf(d.metadata) }
}

/** The object of that kind a subject names: `Kind/name`, or the bare name of one the cluster has. */
function named(
  subject: string,
  kind: string,
  read: Read<{ metadata: ObjectMeta }[]>,
): { name: string; uid?: string } | undefined {
  const prefixed = subject.startsWith(`${kind}/`) ? subject.slice(kind.length + 1) : undefined
  const found = (read.ok ? read.value : []).find((o) => o.metadata.name === (prefixed ?? subject))
  if (found) return { name: found.metadata.name, ...uidOf(found.metadata) }
  return prefixed ? { name: prefixed } : undefined
}

const uidOf = (m: ObjectMeta) => (m.uid ? { uid: m.uid } : {})

/**
 * The Events a run's results ask for, one per distinct (check, status, object, message): what is not a
 * pass, on the object it is about. A cluster-scoped object's Events live in `default`, as kubectl's do.
 */
export function findingEvents(
  results: CheckResult[],
  facts: Facts,
  now: Date,
  instance: string,
): DoctorEvent[] {
  const byName = new Map<string, DoctorEvent>()
  for (const r of results)
    for (const f of r.findings) {
      const reason = REASON[f.status]
      if (!reason) continue
      const regarding = regardingOf(f, facts)
      if (!regarding) continue
      const note = clipNote(`${r.meta.id}: ${f.message}`)
      const namespace = regarding.namespace ?? 'default'
      const key = [r.meta.id, f.status, regarding.kind, namespace, regarding.name, note].join('\n')
      const name = `karpctl-doctor.${createHash('sha256').update(key).digest('hex').slice(0, 20)}`
      byName.set(name, {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: {
          name,
          namespace,
          labels: { 'app.kubernetes.io/managed-by': 'karpctl', 'karpctl.io/check': r.meta.id },
        },
        eventTime: microTime(now),
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: instance,
        action: 'Doctor',
        reason,
        regarding,
        note,
        type: 'Warning',
      })
    }
  return [...byName.values()]
}

/**
 * The write that records `event` once more: a create when the API has no Event of that name, else a
 * merge patch of its series (count one more, last observed now). Only the series changes: an Event's
 * other fields are immutable once created.
 */
export function eventWrite(
  event: DoctorEvent,
  existing: { series?: { count?: number } } | null,
  now: Date,
): { method: 'POST' | 'PATCH'; path: string; body: object; contentType?: string } {
  const collection = `/apis/events.k8s.io/v1/namespaces/${event.metadata.namespace}/events`
  if (!existing) return { method: 'POST', path: collection, body: event }
  return {
    method: 'PATCH',
    path: `${collection}/${event.metadata.name}`,
    body: { series: { count: (existing.series?.count ?? 1) + 1, lastObservedTime: microTime(now) } },
    contentType: 'application/merge-patch+json',
  }
}

/** Writes each Event (read, then create or patch); a failure is counted and logged, never ends the run. */
export async function postEvents(
  kube: KubeClient,
  events: DoctorEvent[],
  now: Date,
  onError: (event: DoctorEvent, err: unknown) => void,
): Promise<{ posted: number; failed: number }> {
  const outcomes = await Promise.all(
    events.map(async (e) => {
      try {
        const path = `/apis/events.k8s.io/v1/namespaces/${e.metadata.namespace}/events/${e.metadata.name}`
        const existing = await kube.fresh<{ series?: { count?: number } }>(path)
        let w = eventWrite(e, existing, now)
        try {
          await kube.write(w.method, w.path, w.body, w.contentType)
        } catch (err) {
          // Created meanwhile by another replica, or expired between the read and the patch: once more.
          if (!(err instanceof KubeApiError && (err.status === 409 || err.status === 404))) throw err
          w = eventWrite(e, err.status === 409 ? {} : null, now)
          await kube.write(w.method, w.path, w.body, w.contentType)
        }
        return true
      } catch (err) {
        onError(e, err)
        return false
      }
    }),
  )
  const posted = outcomes.filter(Boolean).length
  return { posted, failed: outcomes.length - posted }
}
