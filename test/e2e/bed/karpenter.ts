// The real Karpenter controller in the bed (`startBed({ karpenter: true })`), run out of cluster the
// way the Helm chart's Deployment would run it in one: the bed plays the kubelet of that pod. When a
// Deployment labelled app.kubernetes.io/name=karpenter whose image is the built version exists and
// Karpenter's CRDs are established, the controller starts with the Deployment's own settings (its
// container env: CLUSTER_NAME, INTERRUPTION_QUEUE, FEATURE_GATES, …) plus what running outside the
// cluster needs; each rollout restarts it, deleting the Deployment stops it, and the Deployment is
// reported available once /readyz answers. Nothing here writes Karpenter's objects.
import { join } from 'node:path'
import type { KubeClient, KubeObject } from './kube-client.js'
import { KARPENTER_CRDS, markDeploymentAvailable } from './kube-seed.js'
import { freePort, startProc, waitFor, type Proc } from './proc.js'

/** The version build.sh builds (test/e2e/karpenter/go.mod); a Deployment of another image is not run. */
export const KARPENTER_VERSION = '1.14.1'

export interface KarpenterTarget {
  kube: KubeClient
  kubeconfigPath: string
  kubeServer: string
  awsEndpoint: string
  region: string
  tmpDir: string
}

interface Running {
  rollout: string
  proc: Proc
  healthPort: number
  ready: boolean
}

export interface KarpenterController {
  /** the controller process of the current rollout, if one runs */
  readonly proc: Proc | undefined
  /** Waits until the controller of the Deployment's current rollout answers /readyz. */
  ready(timeoutMs?: number): Promise<void>
  /** Stops following the Deployment and stops the controller. */
  stop(): Promise<void>
}

const SELECTOR = 'app.kubernetes.io/name=karpenter'

/**
 * What the controller gets: the Deployment container's literal env (valueFrom: only the namespace),
 * then what out-of-cluster running needs. ISOLATED_VPC=true: moto has no Pricing API (24 × HTTP 500
 * stalled validation) and its ListInstanceProfiles ignores PathPrefix, so the instance-profile
 * garbage collector would delete profiles that are not Karpenter's.
 */
export function controllerEnv(
  deploy: KubeObject,
  t: KarpenterTarget,
  ports: { metrics: number; health: number },
): Record<string, string> {
  const container = (deploy.spec?.template?.spec?.containers ?? []).find(
    (c: KubeObject) => c.name === 'controller',
  )
  const fromDeploy: Record<string, string> = {}
  for (const e of (container?.env ?? []) as { name: string; value?: string }[])
    if (typeof e.value === 'string') fromDeploy[e.name] = e.value
  return {
    ...fromDeploy,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: t.tmpDir,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    SYSTEM_NAMESPACE: deploy.metadata.namespace,
    KUBECONFIG: t.kubeconfigPath,
    CLUSTER_ENDPOINT: t.kubeServer,
    CLUSTER_CA_BUNDLE: '', // out of cluster: the kubeconfig's CA
    AWS_ENDPOINT_URL: t.awsEndpoint,
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_REGION: t.region,
    AWS_EC2_METADATA_DISABLED: 'true',
    DISABLE_LEADER_ELECTION: 'true', // out of cluster it has no pod namespace to elect in
    METRICS_PORT: String(ports.metrics),
    HEALTH_PROBE_PORT: String(ports.health),
    ISOLATED_VPC: 'true',
    LOG_OUTPUT_PATHS: 'stdout',
    LOG_ERROR_OUTPUT_PATHS: 'stderr',
  }
}

/** The version of the Deployment's controller image (`…:1.14.1`, `…:v1.14.1@sha256:…`). */
export const imageVersion = (deploy: KubeObject): string | undefined => {
  const c = (deploy.spec?.template?.spec?.containers ?? []).find((x: KubeObject) => x.name === 'controller')
  return /:v?(\d+\.\d+\.\d+)(@|$)/.exec(String(c?.image ?? ''))?.[1]
}

async function crdsEstablished(kube: KubeClient): Promise<boolean> {
  const crds = await Promise.all(
    KARPENTER_CRDS[KARPENTER_VERSION].map((n) =>
      kube.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}`),
    ),
  )
  return crds.every((c) =>
    (c?.status?.conditions ?? []).some((x: KubeObject) => x.type === 'Established' && x.status === 'True'),
  )
}

async function healthy(port: number): Promise<boolean> {
  const r = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })
  return r.status === 200
}

export function followKarpenterDeployment(
  t: KarpenterTarget,
  bin: string,
  onProc: (p: Proc | undefined) => void,
): KarpenterController {
  let running: Running | undefined
  let wanted: string | undefined
  let stopped = false
  let starts = 0
  const halt = async () => {
    const r = running
    running = undefined
    onProc(undefined)
    await r?.proc.stop(5000)
  }
  const round = async () => {
    const deploy = (await t.kube.list('/apis/apps/v1/deployments', SELECTOR))[0]
    const runnable = !!deploy && imageVersion(deploy) === KARPENTER_VERSION && (await crdsEstablished(t.kube))
    wanted = deploy && runnable ? `${deploy.metadata.uid}/${deploy.metadata.generation}` : undefined
    // a new rollout, the Deployment gone, or a crash (restarted next round, like a pod's container)
    if (running && (running.rollout !== wanted || running.proc.exitCode() !== undefined)) await halt()
    if (!deploy || !wanted) return
    if (running) {
      if (!running.ready && (await healthy(running.healthPort).catch(() => false))) {
        running.ready = true
        await markDeploymentAvailable(t.kube, deploy.metadata.namespace, deploy.metadata.name)
      }
      return
    }
    const [metrics, health] = [await freePort(), await freePort()]
    const proc = startProc('karpenter', bin, [], {
      logPath: join(t.tmpDir, 'logs', `karpenter-${++starts}.log`),
      env: controllerEnv(deploy, t, { metrics, health }),
    })
    running = { rollout: wanted, proc, healthPort: health, ready: false }
    onProc(proc)
  }
  const loop = (async () => {
    while (!stopped) {
      await round().catch(() => undefined) // an object mid-change: next round
      await new Promise((r) => setTimeout(r, 300))
    }
    await halt()
  })()
  return {
    get proc() {
      return running?.proc
    },
    async ready(timeoutMs = 120_000) {
      await waitFor(
        'the Karpenter controller of the current rollout (/readyz)',
        async () => !!running && running.ready && running.rollout === wanted,
        { timeoutMs, intervalMs: 200 },
      ).catch((e: Error) => {
        throw new Error(
          `${e.message}${running ? `\nlog ${running.proc.logPath}:\n${running.proc.logTail(40)}` : ''}`,
        )
      })
    },
    async stop() {
      stopped = true
      await loop
    },
  }
}
