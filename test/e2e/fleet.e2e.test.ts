// doctor --all-clusters on the bed: three EKS clusters in one moto, in two regions and two accounts
// (moto keeps accounts apart: the credentials AssumeRole returns act in the role's account), reached
// through two real kube-apiservers:
//   123456789012 us-west-2 demo   — the getting-started install on API server A, then broken (queue deleted)
//   111111111111 us-east-1 plain  — no Karpenter: API server B, empty
//   111111111111 us-west-2 locked — its API refuses the caller: API server A with a token it does not know
// What is proven: discovery (ListClusters per region, AssumeRole per account), the whole catalog per
// cluster against real servers, the table and JSON, unknown-with-reason that stops nothing, exit = worst.
// What is not: the EKS token. The bed's API servers know static tokens, not EKS tokens, so every cluster
// is reached through the kubeconfig context named by its ARN (--kubeconfig-contexts); the token algorithm
// is proven by test/unit/fleet/token.test.ts (against an independent SigV4 computation) and the
// integration test (API servers that check the token's shape and signer).
// Cluster demo runs the real Karpenter 1.14.1 controller (`startBed({ karpenter: true })`): its Deployment's
// availability and the EC2NodeClass/NodePool Ready are Karpenter's, and when the queue goes Karpenter's
// own log says it cannot read it, beside doctor's interruption-queue failure. Server B (plain, no
// Karpenter) has nothing for a controller to run: it stays a bare API server.
// Field: one AMI release or one expired permission hits every cluster at once
// (aws/karpenter-provider-aws#6952, "replaces all nodes across all our clusters").
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { CreateClusterCommand, EKSClient } from '@aws-sdk/client-eks'
import { CreateRoleCommand, IAMClient } from '@aws-sdk/client-iam'
import { DeleteQueueCommand } from '@aws-sdk/client-sqs'
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts'
import { parse, stringify } from 'yaml'
import {
  awsClientConfig,
  awsClients,
  parseJsonOut,
  runKarpctl,
  seedAws,
  seedKubernetes,
  shown,
  startBed,
  type Bed,
} from './bed/index.js'
import { readyByKarpenter, waitForLog } from './bed/karpenter-objects.js'
import type { KubeObject } from './bed/kube-client.js'

const OTHER_ACCOUNT = '111111111111'
const ROLE = 'KarpctlFleetDoctor'

interface FleetJson {
  exitCode: number
  summary: Record<string, number>
  clusters: {
    name: string
    region: string
    accountId: string
    identity: string
    state: string
    verdict: string
    karpenterVersion: string | null
    access: string
    reason: string | null
    exitCode: number
    report: { checks: { id: string; status: string }[] } | null
  }[]
}

/** The other account's credentials, as a cross-account role gives them (moto: they act in that account). */
async function otherAccount(bed: Bed) {
  const sts = new STSClient(awsClientConfig(bed))
  const out = await sts.send(
    new AssumeRoleCommand({ RoleArn: `arn:aws:iam::${OTHER_ACCOUNT}:role/${ROLE}`, RoleSessionName: 'seed' }),
  )
  const c = out.Credentials!
  const credentials = {
    accessKeyId: c.AccessKeyId!,
    secretAccessKey: c.SecretAccessKey!,
    sessionToken: c.SessionToken,
  }
  return (region: string) => ({ ...awsClientConfig(bed), region, credentials })
}

async function createCluster(config: ReturnType<Awaited<ReturnType<typeof otherAccount>>>, name: string) {
  const eks = new EKSClient(config)
  await eks.send(
    new CreateClusterCommand({
      name,
      version: '1.34',
      roleArn: `arn:aws:iam::${OTHER_ACCOUNT}:role/eks-cluster`,
      resourcesVpcConfig: { subnetIds: [], endpointPublicAccess: true },
    }),
  )
}

describe('doctor --all-clusters on the bed', { timeout: 15 * 60_000 }, () => {
  let a: Bed
  let b: Bed
  let kubeconfig: string
  /** Karpenter's own log line about the deleted queue */
  let queueError: KubeObject

  before(async () => {
    ;[a, b] = await Promise.all([
      startBed({ karpenter: true }),
      startBed({ awsManagedPolicies: false, warmAws: false, controllerManager: false }),
    ])
    const seed = await seedAws(a)
    await seedKubernetes(a, { aws: seed, chartVersion: '1.14.1', markAvailable: false })
    await readyByKarpenter(a)
    // Broken the way a fleet breaks: the interruption queue is gone, and Karpenter says so.
    await awsClients(a).sqs.send(new DeleteQueueCommand({ QueueUrl: seed.queueUrl }))
    queueError = await waitForLog(
      a,
      `Karpenter logs that it cannot read queue ${seed.queueName}`,
      (l) => l.level === 'ERROR' && /getting messages from queue/.test(String(l.error)),
    )

    const other = await otherAccount(a)
    // The role the fleet assumes exists in the other account (moto does not check, AWS would).
    await new IAMClient(other('us-east-1')).send(
      new CreateRoleCommand({
        RoleName: ROLE,
        AssumeRolePolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: { AWS: 'arn:aws:iam::123456789012:root' },
              Action: 'sts:AssumeRole',
            },
          ],
        }),
      }),
    )
    await createCluster(other('us-east-1'), 'plain')
    await createCluster(other('us-west-2'), 'locked')

    // One kubeconfig with a context per cluster ARN, as `aws eks update-kubeconfig` names them.
    const docA = parse(await import('node:fs').then((fs) => fs.readFileSync(a.kubeconfigPath, 'utf8')))
    const ca = (bed: Bed) => Buffer.from(bed.kubeCaPem).toString('base64')
    const ctx = (arn: string, bed: Bed, token: string) => ({
      cluster: { name: arn, cluster: { server: bed.kubeServer, 'certificate-authority-data': ca(bed) } },
      user: { name: arn, user: { token } },
      context: { name: arn, context: { cluster: arn, user: arn } },
    })
    const extra = [
      ctx(`arn:aws:eks:us-east-1:${OTHER_ACCOUNT}:cluster/plain`, b, b.kubeToken),
      ctx(`arn:aws:eks:us-west-2:${OTHER_ACCOUNT}:cluster/locked`, a, 'a-token-this-server-does-not-know'),
    ]
    kubeconfig = join(a.tmpDir, 'fleet-kubeconfig')
    writeFileSync(
      kubeconfig,
      stringify({
        ...docA,
        clusters: [...docA.clusters, ...extra.map((e) => e.cluster)],
        users: [...docA.users, ...extra.map((e) => e.user)],
        contexts: [...docA.contexts, ...extra.map((e) => e.context)],
      }),
      { mode: 0o600 },
    )
  })
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()])
  })

  const fleet = (extra: string[]) =>
    runKarpctl(
      a,
      [
        'doctor',
        '--all-clusters',
        '--regions',
        'us-west-2,us-east-1',
        '--role-name',
        ROLE,
        '--accounts',
        `123456789012,${OTHER_ACCOUNT}`,
        '--kubeconfig-contexts',
        '--timeout',
        '120',
        ...extra,
      ],
      { env: { KUBECONFIG: kubeconfig, NO_COLOR: '1' }, timeoutMs: 300_000 },
    )

  test('JSON: every cluster, the broken one failing, the one without Karpenter so named, the refusing one unknown', async () => {
    const r = await fleet(['--json'])
    const report = parseJsonOut<FleetJson>(r, 'doctor --all-clusters --json')
    assert.equal(r.code, 1, `exit = the worst cluster's (a failure)\n${shown(r)}`)
    assert.equal(report.exitCode, 1)
    const by = Object.fromEntries(report.clusters.map((c) => [`${c.accountId}/${c.region}/${c.name}`, c]))
    assert.deepEqual(
      Object.keys(by).sort(),
      [
        `${OTHER_ACCOUNT}/us-east-1/plain`,
        `${OTHER_ACCOUNT}/us-west-2/locked`,
        '123456789012/us-west-2/demo',
      ],
      shown(r),
    )
    const demo = by['123456789012/us-west-2/demo']!
    assert.equal(demo.state, 'judged')
    assert.equal(demo.exitCode, 1)
    assert.equal(demo.karpenterVersion, '1.14.1')
    assert.equal(demo.access, 'kube-context')
    assert.equal(demo.report?.checks.find((c) => c.id === 'interruption-queue')?.status, 'fail')
    // Karpenter agrees: its interruption controller cannot read the queue doctor finds gone.
    assert.match(String(queueError.error), /QueueDoesNotExist|NonExistentQueue/, JSON.stringify(queueError))
    assert.equal(demo.report?.checks.find((c) => c.id === 'controller-ready')?.status, 'pass')
    // The caller's own account is looked at with its own credentials, the other through the role.
    assert.doesNotMatch(demo.identity, /assumed-role/)
    const plain = by[`${OTHER_ACCOUNT}/us-east-1/plain`]!
    assert.equal(plain.state, 'no-karpenter')
    assert.equal(plain.verdict, 'NO KARPENTER')
    assert.match(plain.identity, new RegExp(`^arn:aws:sts::${OTHER_ACCOUNT}:assumed-role/${ROLE}/`))
    const locked = by[`${OTHER_ACCOUNT}/us-west-2/locked`]!
    assert.equal(locked.state, 'unknown')
    assert.equal(locked.exitCode, 2)
    assert.match(locked.reason ?? '', /rejected the credentials/)
    assert.deepEqual(report.summary, { clusters: 3, failed: 1, unknown: 1, clean: 0, withoutKarpenter: 1 })
    // Worst first.
    assert.deepEqual(
      report.clusters.map((c) => c.name),
      ['demo', 'locked', 'plain'],
    )
  })

  test('table: one row per cluster, worst first, with Karpenter version and identity', async () => {
    const r = await fleet([])
    assert.equal(r.code, 1, shown(r))
    const lines = r.stdout.split('\n')
    assert.match(lines[0] ?? '', /^STATUS\s+CLUSTER\s+KARPENTER\s+IDENTITY\s+CHECKS$/)
    assert.match(
      lines[1] ?? '',
      /^FAIL\s+123456789012\/us-west-2\/demo\s+1\.14\.1\s+arn:aws:\S+\s+.*✖ interruption-queue/,
    )
    assert.match(
      lines[2] ?? '',
      new RegExp(
        `^UNKNOWN\\s+${OTHER_ACCOUNT}/us-west-2/locked\\s+-\\s+\\S*assumed-role/${ROLE}\\S*\\s+.*rejected the credentials`,
      ),
    )
    assert.match(lines[3] ?? '', new RegExp(`^NO KARPENTER\\s+${OTHER_ACCOUNT}/us-east-1/plain\\s+-`))
    assert.match(r.stdout, /^interruption-queue\s+error\s+✖ demo/m)
    assert.match(r.stdout, /3 clusters: 1 failed, 1 unknown, 0 clean, 1 without Karpenter; \d+ API calls/)
  })
})
