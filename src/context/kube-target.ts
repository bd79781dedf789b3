// Which Kubernetes API a changing command writes to, proven to be the EKS cluster chosen before any
// change: helm, the NodePools and aws-auth go wherever the kube context points, and a current context
// left on another cluster would otherwise receive them while IAM changes go to the chosen one.
import type * as eks from '@aws-sdk/client-eks'
import { KarpctlError } from '../errors.js'
import type { RunContext } from './run-context.js'

export interface KubeTarget {
  context: string
  server: string
  /**
   * How the context was proven to be the cluster's: its server is the cluster's endpoint, or its CA is
   * the cluster's (a tunnel or proxy to the same API server), or `--kube-context` named it (the user's
   * word, said in the plan), or nothing could be compared (the cluster has no endpoint to read).
   */
  match: 'endpoint' | 'ca' | 'chosen' | 'unknown'
  /** The endpoint EKS gives for the cluster, when it differs from `server`. */
  eksEndpoint?: string
}

export class KubeTargetError extends KarpctlError {
  constructor(message: string) {
    super(message, 'WRONG_KUBE_CONTEXT')
  }
}

/** Scheme, host and port as a client connects to them: `https://X/` and `https://x:443` are one server. */
export function sameServer(a: string, b: string): boolean {
  const norm = (u: string) => {
    try {
      const url = new URL(u)
      const port = url.port || (url.protocol === 'http:' ? '80' : '443')
      return `${url.protocol}//${url.hostname.toLowerCase()}:${port}${url.pathname.replace(/\/+$/, '')}`
    } catch {
      return u.trim().replace(/\/+$/, '').toLowerCase()
    }
  }
  return norm(a) === norm(b)
}

/** Two CA bundles (PEM, or EKS's base64 of the PEM) hold the same certificates. */
export function sameCa(a: string, b: string): boolean {
  const pem = (s: string) => {
    const text = s.includes('-----BEGIN') ? s : Buffer.from(s, 'base64').toString('utf8')
    return text.replace(/\s+/g, '')
  }
  const x = pem(a)
  return x.length > 0 && x === pem(b)
}

export interface TargetFacts {
  context: string
  server: string
  ca?: string
  /** --kube-context was given: the user named the context. */
  explicit: boolean
  clusterName: string
  eksEndpoint?: string
  eksCa?: string
  /** Other contexts of the kubeconfig and their servers (to name one that is the cluster's). */
  contexts: { name: string; server: string }[]
}

/** The verdict, pure: a KubeTarget, or the one-line reason the run must stop before any change. */
export function judgeKubeTarget(f: TargetFacts): KubeTarget | { blocked: string } {
  const base = { context: f.context, server: f.server }
  if (!f.eksEndpoint) return { ...base, match: 'unknown' }
  const caSame = f.ca !== undefined && f.eksCa !== undefined ? sameCa(f.ca, f.eksCa) : undefined
  if (sameServer(f.server, f.eksEndpoint)) {
    if (caSame === false && !f.explicit)
      return {
        blocked: `kube context "${f.context}" points at EKS cluster ${f.clusterName}'s endpoint but trusts another CA than the cluster's: refresh it (aws eks update-kubeconfig --name ${f.clusterName}) or pass --kube-context to write to it anyway — nothing was changed`,
      }
    return { ...base, match: 'endpoint' }
  }
  if (caSame) return { ...base, match: 'ca', eksEndpoint: f.eksEndpoint }
  if (f.explicit) return { ...base, match: 'chosen', eksEndpoint: f.eksEndpoint }
  const right = f.contexts.find((c) => c.name !== f.context && sameServer(c.server, f.eksEndpoint as string))
  const way = right
    ? `pass --kube-context ${right.name}`
    : `run aws eks update-kubeconfig --name ${f.clusterName}, or pass --kube-context naming the context that reaches it`
  return {
    blocked: `kube context "${f.context}" points at ${f.server}, not at EKS cluster ${f.clusterName} (${f.eksEndpoint}): ${way} — nothing was changed`,
  }
}

/** What a plan says about where Kubernetes changes go. */
export function kubeTargetLine(t: KubeTarget): string {
  const why = {
    endpoint: "the cluster's endpoint",
    ca: `the cluster's CA; EKS's endpoint is ${t.eksEndpoint}`,
    chosen: `named by --kube-context; EKS's endpoint is ${t.eksEndpoint}`,
    unknown: 'the cluster has no endpoint to compare',
  }[t.match]
  return `kube context: ${t.context} (${t.server}: ${why})`
}

const judged = new WeakMap<RunContext, Map<string, Promise<KubeTarget>>>()

/**
 * The verdict once per run and cluster (tenant add proves the context before its reads, and the apply
 * env asks again): DescribeCluster is memoized too, so the plan's own read costs nothing more.
 */
export function kubeTarget(ctx: RunContext, clusterName: string): Promise<KubeTarget> {
  let byCluster = judged.get(ctx)
  if (!byCluster) judged.set(ctx, (byCluster = new Map()))
  let v = byCluster.get(clusterName)
  if (!v) byCluster.set(clusterName, (v = judgeLive(ctx, clusterName)))
  return v
}

async function judgeLive(ctx: RunContext, clusterName: string): Promise<KubeTarget> {
  const creds = ctx.kube.creds
  let eksEndpoint: string | undefined
  let eksCa: string | undefined
  try {
    const out = await ctx.aws.call<eks.DescribeClusterCommandOutput>('eks', 'DescribeCluster', {
      name: clusterName,
    })
    eksEndpoint = out.cluster?.endpoint
    eksCa = out.cluster?.certificateAuthority?.data
  } catch (err) {
    // The plan's own reads say what is wrong with the cluster or the credentials, in their words.
    if (err instanceof KarpctlError) throw err
  }
  let ca: string | undefined
  try {
    const o = await creds.requestOptions()
    ca = o.ca === undefined ? undefined : o.ca.toString()
  } catch {
    ca = undefined // the first Kubernetes read reports the credential problem
  }
  const contexts = creds.config.getContexts().flatMap((c) => {
    const server = creds.config.getCluster(c.cluster)?.server
    return server ? [{ name: c.name, server }] : []
  })
  const v = judgeKubeTarget({
    context: creds.contextName,
    server: creds.server,
    ca,
    explicit: ctx.options.kubeContext !== undefined,
    clusterName,
    eksEndpoint,
    eksCa,
    contexts,
  })
  if ('blocked' in v) throw new KubeTargetError(v.blocked)
  return v
}
