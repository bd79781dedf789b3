// The e2e test bed: moto_server (AWS), etcd + kube-apiserver (+ optionally
// kube-controller-manager) and helm, all real, all on 127.0.0.1, all stopped
// by stop(), on process exit and on SIGINT/SIGTERM/SIGHUP.
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { ACCOUNT_ID, CLUSTER_NAME, REGION } from './constants.js'
import { KubeClient } from './kube-client.js'
import { warmMoto } from './seed.js'
import { artifacts, BED_DIR } from './paths.js'
import { followKarpenterDeployment, type KarpenterController } from './karpenter.js'
import { playKubelet, type Kubelet } from './kubelet.js'
import { forgetTempDir, freePort, registerTempDir, startProc, waitFor, type Proc } from './proc.js'

export interface BedOptions {
  /** name used for the kubeconfig cluster/context ARN (default `demo`) */
  clusterName?: string
  /**
   * Start kube-controller-manager (namespace deletion, garbage collection,
   * default ServiceAccounts, ClusterRole aggregation, kube-root-ca.crt) when
   * it was built. Default true. Deployments/ReplicaSets/Nodes are *not*
   * reconciled (no pods ever run here), so statuses set by tests stay put.
   */
  controllerManager?: boolean
  /**
   * Load the AWS managed IAM policies into moto (MOTO_IAM_LOAD_MANAGED_POLICIES),
   * as a real account has them. Default true. Without it, *no* arn:aws:iam::aws:policy/*
   * exists and attaching one fails with NoSuchEntity.
   */
  awsManagedPolicies?: boolean
  /** warm moto's IAM and EC2 (us-west-2) backends during start-up (default true) */
  warmAws?: boolean
  /**
   * Run the real Karpenter controller (built by build.sh) and kube-scheduler; moto with its gaps
   * filled (bed/moto_launcher.py); the bed plays the kubelet. Default false. See README.md.
   */
  karpenter?: boolean
  /**
   * moto with its gaps filled (bed/moto_launcher.py) without the controller: EKS reports the cluster's
   * `accessConfig.authenticationMode`, as AWS does. Implied by `karpenter`. Default false.
   */
  patchedMoto?: boolean
}

/** The real Karpenter in the bed: the controller following the chart's Deployment, the played kubelet. */
export interface KarpenterBed {
  controller: KarpenterController
  kubelet: Kubelet
}

export interface Bed {
  /** http://127.0.0.1:<port> of moto_server */
  awsEndpoint: string
  accountId: string
  region: string
  /**
   * Variables for a karpctl/helm child process: AWS_ENDPOINT_URL, fake
   * credentials, AWS_REGION, KUBECONFIG, isolated AWS config/helm homes.
   * Merge over process.env, or use childEnv() which also strips AWS_PROFILE etc.
   */
  env: Record<string, string>
  /** process.env minus AWS_PROFILE/AWS_SESSION_TOKEN/…, plus `env`, plus extra */
  childEnv(extra?: Record<string, string>): NodeJS.ProcessEnv
  kubeconfigPath: string
  /** context name, EKS style: arn:aws:eks:us-west-2:123456789012:cluster/demo */
  kubeContext: string
  /** https://127.0.0.1:<port> */
  kubeServer: string
  kubeToken: string
  /** PEM that verifies the apiserver's self-signed serving certificate */
  kubeCaPem: string
  /** independent REST client with admin (system:masters) credentials */
  kube: KubeClient
  helmBin: string
  /** kubectl, when built with KARPCTL_E2E_KUBECTL=1 */
  kubectlBin?: string
  binDir: string
  /** per-bed temp dir (logs in <tmpDir>/logs, removed by stop() unless KARPCTL_E2E_KEEP=1) */
  tmpDir: string
  procs: Record<string, Proc>
  /** with `karpenter: true`: the real controller and the played kubelet */
  karpenter?: KarpenterBed
  /** POST /moto-api/reset: every AWS resource is gone afterwards */
  resetAws(): Promise<void>
  /** stops every process (process groups), removes the temp dir; idempotent */
  stop(): Promise<void>
}

function httpOk(url: string, method = 'GET', timeoutMs = 5000): Promise<number> {
  return new Promise((res, rej) => {
    const req = httpRequest(url, { method, timeout: timeoutMs }, (r) => {
      r.resume()
      r.on('end', () => res(r.statusCode ?? 0))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', rej)
    req.end()
  })
}

const STRIP_FROM_CHILD_ENV = [
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_SESSION_TOKEN',
  'AWS_SECURITY_TOKEN',
  'AWS_ROLE_ARN',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CA_BUNDLE',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'https_proxy',
  'http_proxy',
  'KUBECONFIG',
]

export async function startBed(opts: BedOptions = {}): Promise<Bed> {
  const t0 = Date.now()
  const { binDir, venvDir, karpenterBin } = artifacts()
  if (opts.karpenter && !karpenterBin)
    throw new Error(
      'startBed({ karpenter: true }): no Karpenter controller was built (KARPCTL_E2E_NO_KARPENTER=1?): run test/e2e/bed/build.sh without it',
    )
  const clusterName = opts.clusterName ?? CLUSTER_NAME
  sweepStaleTempDirs()
  const tmpDir = mkdtempSync(join(tmpdir(), 'karpctl-e2e-'))
  registerTempDir(tmpDir)
  writeFileSync(join(tmpDir, 'owner.pid'), String(process.pid))
  const logs = join(tmpDir, 'logs')
  mkdirSync(logs)
  const procs: Record<string, Proc> = {}
  let stopped = false
  let karpenter: KarpenterBed | undefined
  const phase = (what: string) => {
    if (process.env.KARPCTL_E2E_VERBOSE) console.error(`karpctl e2e: +${Date.now() - t0}ms ${what}`)
  }

  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    // the played kubelet and the controller's follower first: nothing restarts what stops below
    await Promise.all([karpenter?.kubelet.stop(), karpenter?.controller.stop()])
    // apiserver/kcm first so they do not spam errors about etcd going away
    for (const names of [
      ['karpenter', 'kube-scheduler', 'kube-controller-manager'],
      ['kube-apiserver'],
      ['etcd', 'moto'],
    ]) {
      await Promise.all(
        names.map(async (n) => {
          const t = Date.now()
          // moto keeps no state worth a graceful exit and takes ~1.5s to honour TERM
          await procs[n]?.stop(n === 'moto' ? 200 : undefined)
          if (process.env.KARPCTL_E2E_VERBOSE)
            console.error(`karpctl e2e: stopped ${n} in ${Date.now() - t}ms`)
        }),
      )
    }
    if (!process.env.KARPCTL_E2E_KEEP) {
      rmSync(tmpDir, { recursive: true, force: true })
      forgetTempDir(tmpDir)
    } else {
      console.error(`karpctl e2e: kept ${tmpDir}`)
    }
  }

  try {
    const [motoPort, etcdClientPort, etcdPeerPort, apiPort] = await distinctPorts(4)
    const noProxy = { NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' }

    // ---- moto
    const awsEndpoint = `http://127.0.0.1:${motoPort}`
    const motoCmd =
      opts.karpenter || opts.patchedMoto
        ? [join(venvDir, 'bin', 'python'), join(BED_DIR, 'moto_launcher.py')]
        : [join(venvDir, 'bin', 'moto_server')]
    procs.moto = startProc(
      'moto',
      motoCmd[0]!,
      [...motoCmd.slice(1), '-H', '127.0.0.1', '-p', String(motoPort)],
      {
        logPath: join(logs, 'moto.log'),
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: tmpDir,
          ...noProxy,
          MOTO_IAM_LOAD_MANAGED_POLICIES: opts.awsManagedPolicies === false ? 'false' : 'true',
          PYTHONUNBUFFERED: '1',
        },
      },
    )

    // Wait for moto and warm it up concurrently with etcd/apiserver: the first
    // IAM call loads ~1,300 AWS managed policies and the first EC2 call per
    // region builds its AMI/instance-type catalogue (several seconds each).
    const motoProc = procs.moto
    const motoReady = (async () => {
      await waitFor('moto_server', async () => (await httpOk(`${awsEndpoint}/moto-api/data.json`)) === 200, {
        timeoutMs: 60_000,
        proc: motoProc,
        intervalMs: 200,
      })
      phase('moto up')
      if (opts.warmAws !== false) await warmMoto({ awsEndpoint, region: REGION })
      phase('moto warm')
    })()
    motoReady.catch(() => {}) // awaited below; avoid an unhandled rejection meanwhile

    // ---- etcd
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`
    const peerUrl = `http://127.0.0.1:${etcdPeerPort}`
    procs.etcd = startProc(
      'etcd',
      join(binDir, 'etcd'),
      [
        '--name=bed',
        `--data-dir=${join(tmpDir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=bed=${peerUrl}`,
        '--initial-cluster-state=new',
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      { logPath: join(logs, 'etcd.log'), env: { PATH: process.env.PATH ?? '', HOME: tmpDir, ...noProxy } },
    )

    // ---- apiserver inputs
    const pki = join(tmpDir, 'pki')
    mkdirSync(pki)
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    })
    writeFileSync(join(pki, 'sa.key'), privateKey, { mode: 0o600 })
    writeFileSync(join(pki, 'sa.pub'), publicKey)
    const token = randomBytes(24).toString('hex')
    // token,user,uid,"groups"
    writeFileSync(join(pki, 'tokens.csv'), `${token},kubernetes-admin,kubernetes-admin,"system:masters"\n`, {
      mode: 0o600,
    })
    const certDir = join(pki, 'serving')

    await waitFor('etcd /health', async () => (await httpOk(`${etcdUrl}/health`)) === 200, {
      timeoutMs: 30_000,
      proc: procs.etcd,
    })
    phase('etcd healthy')

    const kubeServer = `https://127.0.0.1:${apiPort}`
    procs['kube-apiserver'] = startProc(
      'kube-apiserver',
      join(binDir, 'kube-apiserver'),
      [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--cert-dir=${certDir}`, // self-signed serving cert for 127.0.0.1 generated there
        `--token-auth-file=${join(pki, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        `--service-account-issuer=${kubeServer}`,
        `--service-account-key-file=${join(pki, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
        '--service-cluster-ip-range=10.100.0.0/16', // EKS default
        '--allow-privileged=true',
        '--profiling=false',
        '--endpoint-reconciler-type=none', // 127.0.0.1 is not a valid Endpoints address
      ],
      {
        logPath: join(logs, 'kube-apiserver.log'),
        env: { PATH: process.env.PATH ?? '', HOME: tmpDir, ...noProxy },
      },
    )

    const crt = join(certDir, 'apiserver.crt')
    const kubeCaPem = await waitForServingCertificate(certDir, {
      timeoutMs: 60_000,
      proc: procs['kube-apiserver'],
    })
    phase('apiserver certificate written')
    const kube = new KubeClient({ server: kubeServer, token, caPem: kubeCaPem })
    await waitFor(
      'kube-apiserver /readyz',
      async () => (await kube.request('GET', '/readyz')).status === 200,
      {
        timeoutMs: 120_000,
        proc: procs['kube-apiserver'],
        intervalMs: 100,
      },
    )
    phase('apiserver ready')

    // ---- kubeconfig, EKS-style names
    const arn = `arn:aws:eks:${REGION}:${ACCOUNT_ID}:cluster/${clusterName}`
    const kubeconfigPath = join(tmpDir, 'kubeconfig')
    writeFileSync(
      kubeconfigPath,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: arn,
            cluster: {
              server: kubeServer,
              'certificate-authority-data': Buffer.from(kubeCaPem).toString('base64'),
            },
          },
        ],
        users: [{ name: arn, user: { token } }],
        contexts: [{ name: arn, context: { cluster: arn, user: arn } }],
        'current-context': arn,
        preferences: {},
      }),
      { mode: 0o600 },
    )

    // ---- kube-controller-manager (optional)
    const kcmBin = join(binDir, 'kube-controller-manager')
    if (opts.controllerManager !== false && existsSync(kcmBin)) {
      procs['kube-controller-manager'] = startProc(
        'kube-controller-manager',
        kcmBin,
        [
          `--kubeconfig=${kubeconfigPath}`,
          `--authentication-kubeconfig=${kubeconfigPath}`,
          `--authorization-kubeconfig=${kubeconfigPath}`,
          '--bind-address=127.0.0.1',
          '--secure-port=0', // serve nothing
          '--leader-elect=false',
          '--controllers=namespace-controller,garbage-collector-controller,serviceaccount-controller,clusterrole-aggregation-controller,root-ca-certificate-publisher-controller',
          `--root-ca-file=${crt}`,
          `--service-account-private-key-file=${join(pki, 'sa.key')}`,
          '--use-service-account-credentials=false',
        ],
        {
          logPath: join(logs, 'kube-controller-manager.log'),
          env: { PATH: process.env.PATH ?? '', HOME: tmpDir, ...noProxy },
        },
      )
    }

    if (opts.karpenter) {
      const schedulerPort = await freePort()
      procs['kube-scheduler'] = startProc(
        'kube-scheduler',
        join(binDir, 'kube-scheduler'),
        [
          `--kubeconfig=${kubeconfigPath}`,
          `--authentication-kubeconfig=${kubeconfigPath}`,
          `--authorization-kubeconfig=${kubeconfigPath}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${schedulerPort}`,
          `--cert-dir=${join(pki, 'scheduler')}`,
          '--leader-elect=false',
        ],
        {
          logPath: join(logs, 'kube-scheduler.log'),
          env: { PATH: process.env.PATH ?? '', HOME: tmpDir, ...noProxy },
        },
      )
    }

    await motoReady
    phase('moto ready')
    // kube-system exists once the apiserver is ready; make sure (helm needs it)
    await waitFor('namespace kube-system', async () => !!(await kube.get('/api/v1/namespaces/kube-system')), {
      timeoutMs: 30_000,
      proc: procs['kube-apiserver'],
    })
    if (procs['kube-controller-manager']) {
      await waitFor(
        'kube-controller-manager (default ServiceAccount)',
        async () => !!(await kube.get('/api/v1/namespaces/default/serviceaccounts/default')),
        { timeoutMs: 60_000, proc: procs['kube-controller-manager'] },
      )
      phase('kube-controller-manager working')
    }

    const helmHome = join(tmpDir, 'helm')
    const awsDir = join(tmpDir, 'aws')
    mkdirSync(awsDir)
    writeFileSync(join(awsDir, 'config'), '')
    writeFileSync(join(awsDir, 'credentials'), '')
    const env: Record<string, string> = {
      AWS_ENDPOINT_URL: awsEndpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_CONFIG_FILE: join(awsDir, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: join(awsDir, 'credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
      KUBECONFIG: kubeconfigPath,
      HELM_CACHE_HOME: join(helmHome, 'cache'),
      HELM_CONFIG_HOME: join(helmHome, 'config'),
      HELM_DATA_HOME: join(helmHome, 'data'),
      // Docker's config, where Helm looks for registry credentials its own config lacks (and doctor too)
      DOCKER_CONFIG: join(helmHome, 'docker'),
      ...noProxy,
    }
    const kubectl = join(binDir, 'kubectl')

    const bed: Bed = {
      awsEndpoint,
      accountId: ACCOUNT_ID,
      region: REGION,
      env,
      childEnv(extra = {}) {
        const e: NodeJS.ProcessEnv = { ...process.env }
        for (const k of STRIP_FROM_CHILD_ENV) delete e[k]
        return { ...e, ...env, ...extra }
      },
      kubeconfigPath,
      kubeContext: arn,
      kubeServer,
      kubeToken: token,
      kubeCaPem,
      kube,
      helmBin: join(binDir, 'helm'),
      kubectlBin: existsSync(kubectl) ? kubectl : undefined,
      binDir,
      tmpDir,
      procs,
      async resetAws() {
        // slow-ish: moto rebuilds its backends (and reloads the managed policies)
        const status = await httpOk(`${awsEndpoint}/moto-api/reset`, 'POST', 120_000)
        if (status !== 200) throw new Error(`moto reset: HTTP ${status}`)
      },
      stop,
    }
    if (opts.karpenter) {
      const target = { kube, kubeconfigPath, kubeServer, awsEndpoint, region: REGION, tmpDir }
      karpenter = {
        controller: followKarpenterDeployment(target, karpenterBin!, (p) => {
          if (p) procs.karpenter = p
          else delete procs.karpenter
        }),
        kubelet: playKubelet(kube),
      }
      bed.karpenter = karpenter
    }
    if (process.env.KARPCTL_E2E_VERBOSE)
      console.error(`karpctl e2e: bed ready in ${Date.now() - t0}ms (${tmpDir})`)
    return bed
  } catch (e) {
    await stop()
    throw e
  }
}

/**
 * The PEM chain kube-apiserver serves with, once it is completely on disk; null before.
 *
 * With --cert-dir and no certificate there, kube-apiserver generates a self-signed pair and writes it
 * with Go's os.WriteFile: apiserver.crt (the serving certificate, then the CA that signed it) is
 * created and truncated first and filled after, and apiserver.key is written only once the
 * certificate is. Taking the file as soon as it existed sometimes read it empty (or cut after the
 * first certificate). An empty `ca` makes Node verify against its public roots, and a chain without
 * its root leaves the CA the server sends untrusted: every readiness probe then failed with
 * "self-signed certificate in certificate chain" until the wait timed out. The chain is complete when
 * it holds a self-signed CA that issued the serving certificate, and the key (written last) is the
 * serving certificate's.
 */
export function servingChain(certDir: string): string | null {
  let pem: string
  let keyPem: string
  try {
    pem = readFileSync(join(certDir, 'apiserver.crt'), 'utf8')
    keyPem = readFileSync(join(certDir, 'apiserver.key'), 'utf8')
  } catch {
    return null
  }
  try {
    const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
    const certs = blocks.map((b) => new X509Certificate(b))
    const leaf = certs[0]
    const root = certs.find((c) => c.checkIssued(c) && c.verify(c.publicKey))
    if (!leaf || !root || !leaf.checkIssued(root) || !leaf.verify(root.publicKey)) return null
    if (!leaf.checkPrivateKey(createPrivateKey(keyPem))) return null
    return pem
  } catch {
    return null // a half-written PEM block or key
  }
}

/** Waits until kube-apiserver's generated serving certificate is completely written, and returns it. */
export async function waitForServingCertificate(
  certDir: string,
  opts: { timeoutMs: number; proc?: Proc; intervalMs?: number },
): Promise<string> {
  const found = { pem: '' }
  await waitFor(
    'kube-apiserver serving certificate (complete chain and key)',
    async () => {
      found.pem = servingChain(certDir) ?? ''
      return found.pem !== ''
    },
    { intervalMs: 50, ...opts },
  )
  return found.pem
}

/** Removes temp dirs of earlier test processes that died without cleaning up (SIGKILL). */
function sweepStaleTempDirs(): void {
  if (process.env.KARPCTL_E2E_KEEP) return
  let names: string[] = []
  try {
    names = readdirSync(tmpdir()).filter((n) => n.startsWith('karpctl-e2e-'))
  } catch {
    return
  }
  for (const n of names) {
    const dir = join(tmpdir(), n)
    let owner = NaN
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'))
    } catch {
      continue // not ours, or being created right now
    }
    if (!Number.isInteger(owner) || owner <= 0) continue
    try {
      process.kill(owner, 0)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') rmSync(dir, { recursive: true, force: true })
    }
  }
}

async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>()
  while (ports.size < n) ports.add(await freePort())
  return [...ports]
}

export type { Proc } from './proc.js'
