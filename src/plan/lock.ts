// One change at a time per cluster (issue 36.2). Two changing commands at once interleave their writes
// (two installs: one fails half-way on an AWS conflict, helm runs three times), so each takes a lock
// in the cluster before its first write, as Terraform locks its state: a Kubernetes Lease
// (coordination.k8s.io/v1) in the release's namespace, holding who took it (host, pid, command, start
// time), renewed while the run lasts and expired after LEASE_SECONDS without renewal, so a lock left
// by a killed run is taken over once it expires (and the run says so) — at once when that run was on
// this machine and its process is provably gone (a re-run after a kill need not wait a minute). The
// cluster, not a local file: two machines at one cluster see the same lock.
import { readlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import { EnvironmentError, KarpctlError } from '../errors.js'
import { KubeApiError, type KubeClient } from '../context/kube.js'
import { findRelease } from '../facts/collect-kube.js'

export const LOCK_NAME = 'karpctl-lock'
/** A lock not renewed for this long is a killed run's: it may be taken over. */
export const LEASE_SECONDS = 60
/** Renewed this often (a quarter of the lease: three renewals may fail before it expires). */
export const RENEW_MS = 15_000
/** How often a run that waits (--wait-for-lock) looks again. */
export const POLL_MS = 3_000

const A = 'karpctl.io/lock-'

export interface Holder {
  host: string
  pid: number
  command: string
  /** ISO time the run took the lock. */
  started: string
  /**
   * The holder's PID namespace (`/proc/self/ns/pid`): with the host, what proves a pid is on this
   * machine and not in a container that shares its host name.
   */
  pidns?: string
}

/** The Lease object, as much of it as the lock reads and writes. */
export interface Lease {
  apiVersion?: string
  kind?: string
  metadata: {
    name: string
    namespace?: string
    resourceVersion?: string
    annotations?: Record<string, string>
  }
  spec?: {
    holderIdentity?: string
    leaseDurationSeconds?: number
    acquireTime?: string
    renewTime?: string
    leaseTransitions?: number
  }
}

/** Another run holds the lock: one line, who and since when (exit 2). */
export class LockedError extends KarpctlError {
  constructor(message: string) {
    super(message, 'CLUSTER_LOCKED')
  }
}

/** The namespace the lock lives in: the Karpenter release's, or kube-system before there is one. */
export async function lockNamespace(kube: KubeClient): Promise<string> {
  return (await findRelease(kube))?.namespace ?? 'kube-system'
}

const path = (ns: string, name = '') =>
  `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/leases${name ? `/${name}` : ''}`

/** Who holds a Lease, from its annotations (a Lease another tool wrote has none: said so). */
export function holderOf(l: Lease): Holder | null {
  const a = l.metadata.annotations ?? {}
  const pid = Number(a[`${A}pid`])
  const host = a[`${A}host`]
  if (!host || !Number.isInteger(pid)) return null
  const pidns = a[`${A}pidns`]
  return {
    host,
    pid,
    command: a[`${A}command`] ?? '?',
    started: a[`${A}started`] ?? '?',
    ...(pidns ? { pidns } : {}),
  }
}

/**
 * A holder on this machine (same host, same PID namespace) whose process is gone: a killed run, whose
 * lock need not be waited out. A pid that exists (or is another user's) is alive: wait for expiry.
 */
export function goneHere(h: Holder | null, me: Holder, alive = pidAlive): boolean {
  return !!h && !!h.pidns && h.host === me.host && h.pidns === me.pidns && h.pid !== me.pid && !alive(h.pid)
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/** When a Lease stops binding: its last renewal plus its duration (null: held by no one). */
export function expiresAt(l: Lease): number | null {
  if (!l.spec?.holderIdentity) return null
  const renewed = Date.parse(l.spec.renewTime ?? l.spec.acquireTime ?? '')
  if (!Number.isFinite(renewed)) return 0
  return renewed + (l.spec.leaseDurationSeconds ?? LEASE_SECONDS) * 1000
}

const who = (h: Holder | null) =>
  h ? `\`${h.command}\` (pid ${h.pid} on ${h.host}) since ${h.started}` : 'another client'

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
const micro = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')

export interface LockOptions {
  namespace: string
  holder: Holder
  wait: boolean
  now: () => Date
  sleep: (ms: number) => Promise<void>
  say: (line: string) => void
  /** Whether a pid on this machine is alive (tests stand in for the process table). */
  alive?: (pid: number) => boolean
}

export interface HeldLock {
  /** Another run held the lock when this one asked (it waited, or took a killed run's over). */
  waited: boolean
  /**
   * That run had stopped (killed, or its lock expired) and its lock was taken over without waiting for
   * it: what changed since the plan was read is what it left finishing (its helm), no live run's work.
   */
  tookOver?: boolean
  /** Gives the lock back (deletes the Lease it holds). Safe to call twice. */
  release(): Promise<void>
}

function leaseFor(o: LockOptions, id: string, prior?: Lease): Lease {
  const now = micro(o.now())
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: LOCK_NAME,
      namespace: o.namespace,
      ...(prior?.metadata.resourceVersion ? { resourceVersion: prior.metadata.resourceVersion } : {}),
      annotations: {
        [`${A}host`]: o.holder.host,
        [`${A}pid`]: String(o.holder.pid),
        [`${A}command`]: o.holder.command,
        [`${A}started`]: o.holder.started,
        ...(o.holder.pidns ? { [`${A}pidns`]: o.holder.pidns } : {}),
      },
    },
    spec: {
      holderIdentity: id,
      leaseDurationSeconds: LEASE_SECONDS,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: (prior?.spec?.leaseTransitions ?? 0) + (prior ? 1 : 0),
    },
  }
}

const conflict = (err: unknown) => err instanceof KubeApiError && (err.status === 409 || err.status === 422)

/**
 * Takes the cluster's lock, or fails in one line naming who holds it (or, with `wait`, waits until it
 * is free). A Lease whose holder stopped renewing it is taken over, and the run says whose it was.
 */
export async function takeLock(kube: KubeClient, o: LockOptions): Promise<HeldLock> {
  const id = `${o.holder.host}/${o.holder.pid}/${randomBytes(4).toString('hex')}`
  let said = false
  for (;;) {
    const cur = await kube.fresh<Lease>(path(o.namespace, LOCK_NAME))
    let mine: Lease | null = null
    try {
      if (!cur) mine = await kube.write<Lease>('POST', path(o.namespace), leaseFor(o, id), undefined, true)
      else {
        const ends = expiresAt(cur)
        const now = o.now().getTime()
        const gone = goneHere(holderOf(cur), o.holder, o.alive)
        if (ends !== null && ends > now && !gone) {
          const line = `cluster is being changed by ${who(holderOf(cur))}; the lock (Lease ${o.namespace}/${LOCK_NAME}) is renewed while that run lasts and expires ${LEASE_SECONDS} s after it stops`
          if (!o.wait) throw new LockedError(`${line}: wait for it to finish, or pass --wait-for-lock`)
          if (!said) o.say(`waiting: ${line}`)
          said = true
          await o.sleep(POLL_MS)
          continue
        }
        mine = await kube.write<Lease>(
          'PUT',
          path(o.namespace, LOCK_NAME),
          leaseFor(o, id, cur),
          undefined,
          true,
        )
        if (ends !== null && ends > now)
          o.say(
            `took over the lock of ${who(holderOf(cur))}: that process is gone from this machine (killed)`,
          )
        else if (ends !== null)
          o.say(
            `took over the lock of ${who(holderOf(cur))}: not renewed for ${Math.round((now - ends) / 1000) + LEASE_SECONDS} s, that run was stopped or killed`,
          )
      }
    } catch (err) {
      // Another run took it between our read and our write: look again.
      if (conflict(err)) continue
      if (err instanceof KubeApiError && err.status === 403)
        throw new EnvironmentError(
          `the cluster's lock (Lease ${o.namespace}/${LOCK_NAME}) cannot be taken: your Kubernetes identity may not ${err.path.endsWith(LOCK_NAME) ? 'update' : 'create'} leases.coordination.k8s.io there; grant get, create, update and delete on leases in ${o.namespace} (README: Permissions)`,
          'LOCK_FORBIDDEN',
        )
      throw err
    }
    const prior = cur !== null && expiresAt(cur) !== null
    return hold(kube, o, id, mine, said || prior, !said && prior)
  }
}

/** Renews the Lease while the run lasts; releases it at the end. */
function hold(
  kube: KubeClient,
  o: LockOptions,
  id: string,
  lease: Lease,
  waited: boolean,
  tookOver: boolean,
): HeldLock {
  let cur = lease
  let released = false
  let renewing: Promise<unknown> = Promise.resolve()
  const timer = setInterval(() => {
    const renewed: Lease = {
      ...cur,
      spec: { ...cur.spec, holderIdentity: id, renewTime: micro(o.now()) },
    }
    // A renewal that fails is retried by the next; three in a row let the lock expire, as it must
    // when this run can no longer reach the cluster.
    renewing = kube
      .write<Lease>('PUT', path(o.namespace, LOCK_NAME), renewed, undefined, true)
      .then((l) => (cur = l))
      .catch(() => {})
  }, RENEW_MS)
  // The renewal never keeps the process alive on its own.
  timer.unref()
  return {
    waited,
    tookOver,
    async release() {
      if (released) return
      released = true
      clearInterval(timer)
      await renewing
      // Only the Lease this run holds (the resourceVersion it last wrote): never another's.
      await kube
        .write(
          'DELETE',
          path(o.namespace, LOCK_NAME),
          {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            preconditions: { resourceVersion: cur.metadata.resourceVersion },
          },
          undefined,
          true,
        )
        .catch(() => {})
    },
  }
}

/** This run, as the lock records it. */
export function thisRun(command: string, now: Date): Holder {
  let pidns: string | undefined
  try {
    pidns = readlinkSync('/proc/self/ns/pid')
  } catch {
    // No /proc (macOS): a killed run's lock is taken over when it expires.
  }
  return {
    host: hostname(),
    pid: process.pid,
    command,
    started: now.toISOString(),
    ...(pidns ? { pidns } : {}),
  }
}
