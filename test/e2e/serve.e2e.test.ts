// doctor inside the cluster (issue 38 item 2), on the bed: the real helm renders charts/karpctl-doctor
// and the real kube-apiserver validates every object of it (server-side apply, dry run, strict field
// validation — what `kubectl apply --server-side --dry-run=server` sends); then the chart's ServiceAccount,
// ClusterRole and binding are applied for real and `karpctl doctor --serve` runs as that ServiceAccount
// (a token from the TokenRequest API, in the chart's own kubeconfig shape), so a read the ClusterRole
// does not grant would show as a denied read. Its /metrics are scraped, its Events read back, a second
// run raises the same Events' series count instead of adding Events, and SIGTERM ends it with exit 0.
// Field: one broken setting stops every node, and users find out from pending pods, not from Karpenter
// (aws/karpenter-provider-aws#6952, "replaces all nodes across all our clusters"); the Events put the
// finding on `kubectl describe ec2nodeclass` where they look.
// On the real Karpenter 1.14.1 controller (`startBed({ karpenter: true })`): the server answers from what
// Karpenter wrote — the Deployment available once the controller answers /readyz, the EC2NodeClass's
// `SubnetsReady=False (SubnetsNotFound)` for the untagged subnets, and Karpenter's own log line for the
// queue it cannot read — each asserted beside the Event and metric doctor --serve makes of it.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { DeleteTagsCommand } from '@aws-sdk/client-ec2'
import { CreatePolicyCommand } from '@aws-sdk/client-iam'
import { DeleteQueueCommand } from '@aws-sdk/client-sqs'
import { parseAllDocuments, parse, stringify } from 'yaml'
import {
  awsClients,
  CLUSTER_NAME,
  REGION,
  REPO_ROOT,
  runCommand,
  runKarpctl,
  seedAws,
  seedKubernetes,
  shown,
  startBed,
  type Bed,
} from './bed/index.js'
import { EC2NODECLASSES, conditionOf, waitForCondition, waitForLog } from './bed/karpenter-objects.js'
import { objectPath, type KubeObject } from './bed/kube-client.js'

const NS = 'karpctl'
const RELEASE = 'doctor'
const SA = `${RELEASE}-karpctl-doctor`

interface EventJson {
  metadata: { name: string; namespace: string }
  reason: string
  note: string
  reportingController: string
  regarding: { kind: string; name: string; namespace?: string }
  series?: { count: number }
}

function renderChart(bed: Bed, extra: string[] = []) {
  return runCommand(bed, bed.helmBin, [
    'template',
    RELEASE,
    join(REPO_ROOT, 'charts/karpctl-doctor'),
    '--namespace',
    NS,
    '--kube-version',
    '1.34.4',
    '--set',
    `clusterName=${CLUSTER_NAME},region=${REGION},image.repository=registry.example/karpctl`,
    ...extra,
  ])
}

/** `kubectl apply --server-side --dry-run=server` of one object, strict: an unknown field is an error. */
function dryRunApply(bed: Bed, obj: KubeObject) {
  const path = objectPath(obj.apiVersion, obj.kind, obj.metadata?.namespace ?? NS, obj.metadata?.name)
  return bed.kube.request(
    'PATCH',
    `${path}?dryRun=All&fieldManager=helm-template&force=true&fieldValidation=Strict`,
    obj,
    'application/apply-patch+yaml',
  )
}

/** The metric's samples as `labels → value`, for one family. */
function metric(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line)
    if (m) out.set(m[1] ?? '', Number(m[2]))
  }
  return out
}

describe('doctor --serve and its chart on the bed', { timeout: 10 * 60_000 }, () => {
  let bed: Bed
  let objects: KubeObject[]
  let serving: ChildProcess | undefined
  let stderr = ''
  let base = ''
  /** Karpenter's word on the two faults: the class as it marked it, its log line about the queue */
  let karpenterClass: KubeObject
  let queueError: KubeObject

  before(async () => {
    bed = await startBed({ karpenter: true })
    const seed = await seedAws(bed)
    // Two faults, made before the controller starts so that its first resolution already sees them: one
    // about the EC2NodeClass (its subnets lost their discovery tag), one about the controller (its
    // interruption queue is gone).
    const aws = awsClients(bed)
    await aws.ec2.send(
      new DeleteTagsCommand({ Resources: seed.subnetIds, Tags: [{ Key: 'karpenter.sh/discovery' }] }),
    )
    await aws.sqs.send(new DeleteQueueCommand({ QueueUrl: seed.queueUrl }))
    await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1', markAvailable: false })
    await bed.karpenter!.controller.ready()
    karpenterClass = await waitForCondition(bed, `${EC2NODECLASSES}/default`, 'SubnetsReady', {
      status: 'False',
      reason: 'SubnetsNotFound',
    })
    // v1.14.1 makes its SQS provider on the interruption controller's first reconcile (GetQueueUrl).
    queueError = await waitForLog(
      bed,
      `Karpenter logs that queue ${seed.queueName} cannot be read`,
      (l) => l.level === 'ERROR' && /QueueDoesNotExist|NonExistentQueue/.test(JSON.stringify(l)),
    )
    await bed.kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })
    const r = await renderChart(bed)
    assert.equal(r.code, 0, shown(r))
    objects = parseAllDocuments(r.stdout)
      .map((d) => d.toJSON() as KubeObject)
      .filter(Boolean)
  })
  after(async () => {
    serving?.kill('SIGKILL')
    await bed?.stop()
  })

  test("helm template of the chart: every object passes the API server's strict server-side dry run", async () => {
    assert.deepEqual(objects.map((o) => o.kind).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'Deployment',
      'Service',
      'ServiceAccount',
    ])
    for (const o of objects) {
      const res = await dryRunApply(bed, o)
      assert.equal(res.status < 300, true, `${o.kind} ${o.metadata.name}: HTTP ${res.status} ${res.text}`)
    }
    // The dry run changed nothing.
    assert.equal(await bed.kube.get(objectPath('apps/v1', 'Deployment', NS, SA)), undefined)
    // And it does validate: a field the Deployment does not have, or a value it cannot take, is refused.
    const deployment = objects.find((o) => o.kind === 'Deployment')!
    const unknownField = await dryRunApply(bed, { ...deployment, spec: { ...deployment.spec, replica: 1 } })
    assert.ok(unknownField.status >= 400, unknownField.text)
    assert.match(unknownField.text, /\.spec\.replica: field not declared in schema/)
    const badValue = await dryRunApply(bed, { ...deployment, spec: { ...deployment.spec, replicas: -1 } })
    assert.equal(badValue.status, 422, badValue.text)
    // The IRSA annotation, when asked for.
    const irsa = await renderChart(bed, [
      '--set',
      'aws.irsaRoleArn=arn:aws:iam::123456789012:role/KarpctlDoctor',
    ])
    const sa = parseAllDocuments(irsa.stdout)
      .map((d) => d.toJSON() as KubeObject)
      .find((o) => o?.kind === 'ServiceAccount')!
    assert.equal(
      sa.metadata.annotations['eks.amazonaws.com/role-arn'],
      'arn:aws:iam::123456789012:role/KarpctlDoctor',
    )
    assert.equal((await dryRunApply(bed, sa)).status < 300, true)
  })

  test('--print-iam-policy prints a policy IAM accepts', async () => {
    const r = await runKarpctl(bed, ['doctor', '--print-iam-policy'])
    assert.equal(r.code, 0, shown(r))
    const created = await awsClients(bed).iam.send(
      new CreatePolicyCommand({ PolicyName: 'KarpctlDoctorRead', PolicyDocument: r.stdout }),
    )
    assert.ok(created.Policy?.Arn)
  })

  test("as the chart's ServiceAccount: /metrics, Events on the objects, deduplicated, SIGTERM stops it", async () => {
    // The chart's RBAC for real, and a token of its ServiceAccount in the chart's kubeconfig shape.
    for (const kind of ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'])
      await bed.kube.apply(objects.find((o) => o.kind === kind)!)
    const tr = await bed.kube.request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${NS}/serviceaccounts/${SA}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    )
    assert.equal(tr.status, 201, tr.text)
    const dir = bed.tmpDir
    writeFileSync(join(dir, 'sa-token'), tr.body.status.token, { mode: 0o600 })
    writeFileSync(join(dir, 'sa-ca.crt'), bed.kubeCaPem)
    const cm = objects.find((o) => o.kind === 'ConfigMap')!
    const kubeconfig = parse(cm.data.kubeconfig as string)
    kubeconfig.clusters[0].cluster.server = bed.kubeServer
    kubeconfig.clusters[0].cluster['certificate-authority'] = join(dir, 'sa-ca.crt')
    kubeconfig.users[0].user.tokenFile = join(dir, 'sa-token')
    writeFileSync(join(dir, 'sa-kubeconfig'), stringify(kubeconfig), { mode: 0o600 })

    serving = spawn(
      process.execPath,
      [
        join(REPO_ROOT, 'bin/run.js'),
        'doctor',
        '--serve',
        '--cluster',
        CLUSTER_NAME,
        '--region',
        REGION,
        '--interval',
        '10s',
        '--listen',
        '127.0.0.1:0',
      ],
      {
        env: bed.childEnv({ KUBECONFIG: join(dir, 'sa-kubeconfig'), POD_NAME: 'doctor-e2e' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    serving.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
    serving.stdout!.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
    // A run has ended, its Events written, when it logs its Events line.
    const runs = () => (stderr.match(/ events: \d+ written, \d+ failed/g) ?? []).length
    const until = async (what: string, ok: () => boolean, ms = 90_000) => {
      for (const end = Date.now() + ms; !ok(); await sleep(200))
        assert.ok(Date.now() < end && serving!.exitCode === null, `${what}: not within ${ms} ms\n${stderr}`)
    }
    await until('listening', () => /serving \/metrics and \/healthz on (http:\/\/\S+)/.test(stderr))
    base = /serving \/metrics and \/healthz on (http:\/\/\S+),/.exec(stderr)![1]!
    await until('the first run', () => runs() >= 1)

    const health = await fetch(`${base}/healthz`)
    assert.equal(health.status, 200)
    const scrape = await fetch(`${base}/metrics`)
    assert.equal(scrape.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
    const text = await scrape.text()
    // Kept with KARPCTL_E2E_KEEP=1 (the README's example is one).
    writeFileSync(join(dir, 'metrics.txt'), `${text}\n${stderr}`)
    const checks = metric(text, 'karpctl_check')
    assert.equal(checks.get('{check="discovery-tags",severity="error",status="fail"}'), 1, text)
    assert.equal(checks.get('{check="interruption-queue",severity="error",status="fail"}'), 1, text)
    assert.ok(checks.size > 10, text)
    // Every read the ServiceAccount made was granted: the ClusterRole lists what doctor reads.
    assert.equal(metric(text, 'karpctl_read_failures').get('{kind="denied"}'), undefined, text)
    assert.equal(metric(text, 'karpctl_last_run_success').get(''), 1, text)
    assert.ok((metric(text, 'karpctl_api_calls').get('') ?? 0) > 20, text)
    assert.ok(
      metric(text, 'karpctl_check_findings').get('{check="discovery-tags",severity="error",status="fail"}'),
    )
    const ended = metric(text, 'karpctl_last_run_timestamp_seconds').get('')!
    assert.ok(Math.abs(ended - Date.now() / 1000) < 120, text)

    const listEvents = async () =>
      (await bed.kube.list(
        '/apis/events.k8s.io/v1/events',
        'app.kubernetes.io/managed-by=karpctl',
      )) as unknown as EventJson[]
    const first = await listEvents()
    const onNodeClass = first.find((e) => e.note.startsWith('discovery-tags:'))
    assert.ok(onNodeClass, JSON.stringify(first, null, 1))
    assert.deepEqual(
      [
        onNodeClass.regarding.kind,
        onNodeClass.regarding.name,
        onNodeClass.metadata.namespace,
        onNodeClass.reason,
      ],
      ['EC2NodeClass', 'default', 'default', 'CheckFailed'],
    )
    assert.equal(onNodeClass.reportingController, 'karpctl.io/doctor')
    const onController = first.find((e) => e.note.startsWith('interruption-queue:'))
    assert.ok(onController, JSON.stringify(first, null, 1))
    assert.deepEqual(
      [onController.regarding.kind, onController.regarding.namespace, onController.metadata.namespace],
      ['Deployment', 'kube-system', 'kube-system'],
    )
    assert.equal(onNodeClass.series, undefined)
    // Beside Karpenter's own word on the same two things: the class it marked not Ready for its
    // subnets, and its log about the queue.
    assert.equal(conditionOf(karpenterClass, 'Ready')?.status, 'False', JSON.stringify(karpenterClass.status))
    assert.match(String(queueError.error ?? queueError.msg ?? queueError.message), /queue/i)
    // `kubectl describe ec2nodeclass default` shows it: describe selects Events by kind, name,
    // namespace and uid of the object.
    const nodeClass = await bed.kube.get(
      objectPath('karpenter.k8s.aws/v1', 'EC2NodeClass', undefined, 'default'),
    )
    const described = await bed.kube.request<{ items: { note?: string; message?: string }[] }>(
      'GET',
      `/api/v1/events?fieldSelector=${encodeURIComponent(
        `involvedObject.name=default,involvedObject.namespace=,involvedObject.kind=EC2NodeClass,involvedObject.uid=${nodeClass!.metadata.uid}`,
      )}`,
    )
    assert.ok(
      described.body.items.some((e) => (e.message ?? '').startsWith('discovery-tags:')),
      described.text,
    )
    // What `kubectl get events --field-selector reportingComponent=karpctl.io/doctor` asks (NOTES.txt).
    const core = await bed.kube.request<{ items: unknown[] }>(
      'GET',
      `/api/v1/events?fieldSelector=${encodeURIComponent('reportingComponent=karpctl.io/doctor')}`,
    )
    assert.equal(core.body.items.length, first.length, core.text)

    // The next run: the same findings are the same Events, each seen twice.
    await until('the second run', () => runs() >= 2)
    const second = await listEvents()
    assert.deepEqual(
      second.map((e) => e.metadata.name).sort(),
      first.map((e) => e.metadata.name).sort(),
      'no new Event for a finding seen again',
    )
    const again = second.find((e) => e.metadata.name === onNodeClass.metadata.name)!
    assert.equal(again.series?.count, 2, JSON.stringify(again))
    const totals = metric(await (await fetch(`${base}/metrics`)).text(), 'karpctl_events_total')
    assert.equal(totals.get('{result="error"}'), 0)
    assert.equal(totals.get('{result="ok"}'), first.length * 2)

    // SIGTERM: the wait ends, the server closes, exit 0.
    const exited = new Promise<number | null>((resolve) => serving!.once('exit', (code) => resolve(code)))
    serving.kill('SIGTERM')
    const code = await Promise.race([exited, sleep(15_000).then(() => 'still running')])
    assert.equal(code, 0, stderr)
    assert.match(stderr, /stopping \(SIGTERM\)/)
    await assert.rejects(fetch(`${base}/metrics`))
  })
})
