// karpctl doctor against real servers nobody here wrote: moto_server for AWS, a real kube-apiserver +
// etcd, the real helm binary and the real Karpenter charts. A healthy getting-started install must
// pass; each founding check is then broken in exactly one way, doctor must fail that check naming
// the resource and printing a fix, and after the fix's effect is applied doctor must pass again.
// On the real Karpenter 1.14.1 controller (issue 34; bed/karpenter.ts): the chart's Deployment runs it,
// its availability after every helm upgrade is the new controller's /readyz, and the EC2NodeClass and
// NodePool conditions doctor reads are Karpenter's. Where Karpenter reports on a break (untagged subnets:
// SubnetsReady=False; a queue ARN: it cannot find its queue, and a message put there stays unread), its
// own account is asserted beside doctor's finding, and after the fix Karpenter's Ready or its reading of
// the queue proves the fix.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Ajv } from 'ajv'
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateTagsCommand,
  DeleteTagsCommand,
  DescribeSecurityGroupsCommand,
  RevokeSecurityGroupIngressCommand,
} from '@aws-sdk/client-ec2'
import {
  ListRulesCommand,
  ListTargetsByRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
} from '@aws-sdk/client-eventbridge'
import {
  AttachRolePolicyCommand,
  CreatePolicyCommand,
  CreateRoleCommand,
  DeleteRoleCommand,
  DetachRolePolicyCommand,
  CreatePolicyVersionCommand,
  DeletePolicyCommand,
  DeletePolicyVersionCommand,
  DeleteRolePermissionsBoundaryCommand,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  ListPolicyVersionsCommand,
  PutRolePermissionsBoundaryCommand,
  PutRolePolicyCommand,
  DeleteRolePolicyCommand,
  UpdateAssumeRolePolicyCommand,
} from '@aws-sdk/client-iam'
import { CreateNodegroupCommand, DeleteNodegroupCommand } from '@aws-sdk/client-eks'
import { CreateAliasCommand, CreateKeyCommand, KMSClient, PutKeyPolicyCommand } from '@aws-sdk/client-kms'
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs'
import type { Finding } from '../../src/checks/types.js'
import type { Facts } from '../../src/facts/types.js'
import { clusterAutoscalerDeployment } from '../helpers/facts.js'
import {
  EC2NODECLASSES,
  NODEPOOLS,
  conditionOf,
  controllerLog,
  controllerRolledOut,
  isTrue,
  restartController,
  unresolved,
  waitForCondition,
} from './bed/karpenter-objects.js'
import {
  awsClientConfig,
  awsClients,
  CLUSTER_NAME,
  controllerTrustPolicy,
  gettingStartedValues,
  helm,
  karpenterChartDir,
  REGION,
  REPO_ROOT,
  seedAws,
  seedKubernetes,
  withoutIrsaAnnotation,
  startBed,
  waitFor,
  type AwsClients,
  type Bed,
  type SeedResult,
} from './bed/index.js'
import { servingChain, waitForServingCertificate } from './bed/bed.js'
import { KubeClient } from './bed/kube-client.js'

interface CheckJson {
  id: string
  status: string
  findings: Finding[]
}
interface Report {
  summary: Record<string, number>
  checks: CheckJson[]
}
interface Run {
  code: number
  stdout: string
  stderr: string
  report: Report
}

const BIN = join(REPO_ROOT, 'bin', 'run.js')

function karpctl(bed: Bed, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: bed.childEnv({ NO_COLOR: '1' }), timeout: 120_000, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 99) : 0
        resolve({ code: typeof code === 'number' ? code : 99, stdout, stderr })
      },
    )
  })
}

async function doctor(bed: Bed, extra: string[] = []): Promise<Run> {
  const target = ['--cluster', CLUSTER_NAME, '--region', REGION, '--kube-context', bed.kubeContext]
  const r = await karpctl(bed, ['doctor', ...target, '--json', ...extra])
  let report: Report
  try {
    report = JSON.parse(r.stdout) as Report
  } catch {
    throw new Error(`doctor printed no JSON report (exit ${r.code}):\n${r.stdout}\n${r.stderr}`)
  }
  return { ...r, report }
}

const check = (run: Run, id: string): CheckJson => {
  const c = run.report.checks.find((x) => x.id === id)
  assert.ok(c, `no result for ${id}`)
  return c
}
const failing = (c: CheckJson) => c.findings.filter((f) => f.status === 'fail')
const summary = (run: Run) =>
  run.report.checks
    .map((c) => `${c.status.padEnd(7)} ${c.id}: ${c.findings.map((f) => f.message).join(' | ')}`)
    .join('\n')

function assertNoFailure(run: Run) {
  const failed = run.report.checks.filter((c) => c.status === 'fail')
  assert.deepEqual(
    failed.map((c) => c.id),
    [],
    `doctor failed checks:\n${summary(run)}`,
  )
  assert.equal(run.code, 0, `exit ${run.code}: ${run.stderr}`)
}

/** The --policy-document JSON of an `aws iam ...` fix command, as the user would paste it. */
function policyDocumentOf(command: string): string {
  const m = /--policy-document '(.+)'$/.exec(command)
  assert.ok(m, `no --policy-document in ${command}`)
  JSON.parse(m[1]!)
  return m[1]!
}

describe(
  'karpctl doctor on a real apiserver, moto and the real Karpenter chart',
  { timeout: 40 * 60_000 },
  () => {
    let bed: Bed
    let seed: SeedResult
    let aws: AwsClients

    before(async () => {
      bed = await startBed({ karpenter: true })
      seed = await seedAws(bed)
      aws = awsClients(bed)
      // The chart's Deployment runs the real controller; the class and pool are Karpenter's to mark.
      await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1', markAvailable: false })
      await bed.karpenter!.controller.ready()
      await classAndPoolReady()
    })

    /** A failed helm revision changed no Deployment: the controller that ran before still runs, Ready. */
    async function stillRunning() {
      const before = bed.karpenter!.controller.proc
      await controllerRolledOut(bed)
      assert.ok(before && bed.karpenter!.controller.proc === before, 'the same controller process')
      assert.equal(before.exitCode(), undefined)
    }

    /** Karpenter marked the default EC2NodeClass (for its current spec) and NodePool Ready. */
    async function classAndPoolReady() {
      await waitFor(
        'EC2NodeClass default Ready by Karpenter for its current spec',
        async () => {
          const nc = await bed.kube.get(CLASS)
          const ready = conditionOf(nc, 'Ready')
          return ready?.status === 'True' && ready.observedGeneration === nc?.metadata.generation
        },
        { timeoutMs: 120_000, intervalMs: 500, proc: bed.procs.karpenter },
      )
      await waitForCondition(bed, POOL, 'Ready', { status: 'True' })
    }
    after(async () => {
      await bed?.stop()
    })

    test('healthy getting-started install (IRSA, aws-auth): no failing check, exit 0', async (t) => {
      const run = await doctor(bed)
      t.diagnostic(summary(run))
      assertNoFailure(run)
      // What doctor passes, Karpenter itself resolved: its five conditions on the class, the pool Ready.
      const nc = await bed.kube.get(CLASS)
      assert.deepEqual(unresolved(nc), [], JSON.stringify(nc?.status))
      assert.ok(isTrue(await bed.kube.get(POOL), 'Ready'))
      assert.ok(bed.karpenter!.controller.proc, 'the real controller runs the Deployment')
      for (const id of [
        'discovery-tags',
        'irsa-trust-policy',
        'passrole-node-role',
        'controller-policy',
        'node-role',
        'interruption-queue',
        'interruption-rules',
        'helm-release',
        'nodeclass-ready',
      ]) {
        assert.equal(check(run, id).status, 'pass', `${id} should pass:\n${summary(run)}`)
      }
      assert.equal(check(run, 'sg-webhook-8443').status, 'skipped')
    })

    test('what moto cannot answer is unknown or said, never a silent pass; the run still succeeds', async () => {
      const file = join(bed.tmpDir, 'snapshot.json')
      const run = await doctor(bed, ['--save-snapshot', file])
      assert.equal(run.code, 0)
      const facts = JSON.parse(readFileSync(file, 'utf8')) as Facts
      // moto 5.2.1: EKS access entries answer 404 (unsupported, said); the policy simulator 500. Pod
      // Identity associations and add-ons are served by the bed's patched moto (bed/moto_launcher.py).
      const entries = facts.eks.accessEntries
      assert.equal(entries.ok, false, 'access entries should not be readable on moto')
      if (!entries.ok) assert.equal(entries.error.kind, 'unsupported', JSON.stringify(entries.error))
      assert.deepEqual(facts.eks.podIdentityAssociations, { ok: true, value: [] })
      assert.ok(facts.eks.addons.ok, JSON.stringify(facts.eks.addons))
      const passRole = Object.values(facts.iam.passRole)[0]
      assert.ok(passRole?.ok)
      assert.equal(passRole.value.method, 'local')
      assert.ok(passRole.value.simulatorUnavailable)
      const evidence = JSON.stringify(check(run, 'passrole-node-role').findings)
      assert.match(evidence, /local evaluator/)
      // The snapshot carries no credential: the bed's kube token never reaches it.
      assert.ok(!readFileSync(file, 'utf8').includes(bed.kubeToken))
    })

    test('sts-regional-endpoints as a boolean: the apiserver refuses it, doctor --values/--terraform name it before install, --set-string fixes it', async () => {
      const key = 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints'
      const broken = await upgrade(bed, '--set', `${key}=true`).then(
        () => null,
        (err: Error) => err.message,
      )
      // What users see: Helm cannot even build the ServiceAccount, and the release is left as it was.
      assert.ok(broken, 'helm upgrade with a boolean annotation should fail against a real apiserver')
      await stillRunning()
      assert.match(
        broken,
        /cannot unmarshal bool into Go struct field ObjectMeta\.metadata\.annotations of type string/,
      )

      // The same mistake in a values file and in Terraform, caught before anything is sent.
      const dir = join(bed.tmpDir, 'infra')
      mkdirSync(dir, { recursive: true })
      writeFileSync(
        join(dir, 'values.yaml'),
        'serviceAccount:\n  annotations:\n    eks.amazonaws.com/sts-regional-endpoints: true\n',
      )
      writeFileSync(
        join(dir, 'main.tf'),
        [
          'resource "helm_release" "karpenter" {',
          '  name       = "karpenter"',
          '  repository = "oci://public.ecr.aws/karpenter"',
          '  chart      = "karpenter"',
          '  set {',
          '    name  = "serviceAccount.annotations.eks\\\\.amazonaws\\\\.com/sts-regional-endpoints"',
          '    value = "true"',
          '  }',
          '}',
          '',
        ].join('\n'),
      )
      const lint = await karpctl(bed, [
        'doctor',
        '--values',
        join(dir, 'values.yaml'),
        '--terraform',
        dir,
        '--json',
      ])
      assert.equal(lint.code, 1, lint.stderr)
      const findings = failing(
        (JSON.parse(lint.stdout) as Report).checks.find((c) => c.id === 'toleration-value-types')!,
      )
      assert.ok(
        findings.some((f) => f.subject?.includes('values.yaml') && /sts-regional-endpoints/.test(f.message)),
        JSON.stringify(findings),
      )
      assert.ok(
        findings.some(
          (f) => f.subject?.includes('main.tf') && /type = "string"/.test(`${f.message} ${f.fix?.summary}`),
        ),
        JSON.stringify(findings),
      )

      await upgrade(bed, '--set-string', `${key}=true`)
      const run = await doctor(bed)
      assert.equal(check(run, 'sts-regional-annotation').status, 'pass', summary(run))
      const sa = await bed.kube.get('/api/v1/namespaces/kube-system/serviceaccounts/karpenter')
      assert.equal(sa?.metadata.annotations['eks.amazonaws.com/sts-regional-endpoints'], 'true')
      assertNoFailure(run)
    })

    test('the annotation in Helm values but not on the live ServiceAccount (serviceAccount.create=false): doctor fails it', async () => {
      await bed.kube.mergePatch('/api/v1/namespaces/kube-system/serviceaccounts/karpenter', {
        // keep: the platform team owns the ServiceAccount from now on, Helm must not delete it.
        metadata: {
          annotations: {
            'eks.amazonaws.com/sts-regional-endpoints': null,
            'helm.sh/resource-policy': 'keep',
          },
        },
      })
      await upgrade(bed, '--set', 'serviceAccount.create=false', '--set', 'serviceAccount.name=karpenter')
      const run = await doctor(bed)
      const sts = check(run, 'sts-regional-annotation')
      assert.equal(sts.status, 'fail', summary(run))
      const f = failing(sts)[0]!
      assert.match(f.message, /kube-system\/karpenter/)
      const annotate = f.fix!.commands!.find((c) => c.startsWith('kubectl annotate'))
      assert.ok(annotate, JSON.stringify(f.fix))
      // The fix's effect: kubectl annotate serviceaccount karpenter -n kube-system eks.amazonaws.com/sts-regional-endpoints=true
      await bed.kube.mergePatch('/api/v1/namespaces/kube-system/serviceaccounts/karpenter', {
        metadata: { annotations: { 'eks.amazonaws.com/sts-regional-endpoints': 'true' } },
      })
      const again = await doctor(bed)
      assert.equal(check(again, 'sts-regional-annotation').status, 'pass', summary(again))
      await upgrade(bed, '--set', 'serviceAccount.create=true')
      assertNoFailure(await doctor(bed))
    })

    test('a toleration value that is not a string: the apiserver rejects the Deployment, doctor names the path', async () => {
      const toleration =
        'tolerations[0].key=dedicated,tolerations[0].operator=Equal,tolerations[0].effect=NoSchedule'
      const broken = await upgrade(bed, '--set', `${toleration},tolerations[0].value=true`).then(
        () => null,
        (err: Error) => err.message,
      )
      assert.ok(broken, 'helm upgrade with a boolean toleration value should fail against a real apiserver')
      await stillRunning()
      assert.match(
        broken,
        /cannot unmarshal bool into Go struct field Toleration\.spec\.template\.spec\.tolerations\.value of type string/,
      )
      const run = await doctor(bed)
      const tol = check(run, 'toleration-value-types')
      assert.equal(tol.status, 'fail', summary(run))
      const f = failing(tol).find((x) => /tolerations\[0\]\.value/.test(x.message))
      assert.ok(f, JSON.stringify(tol.findings))
      assert.ok(f.fix?.commands?.some((c) => c.includes('--set-string')))

      await upgrade(bed, '--set', toleration, '--set-string', 'tolerations[0].value=true')
      const again = await doctor(bed)
      assert.equal(check(again, 'toleration-value-types').status, 'pass', summary(again))
      assertNoFailure(again)
    })

    test('untagged subnets: discovery-tags fails naming the EC2NodeClass, tagging them fixes it', async () => {
      await aws.ec2.send(
        new DeleteTagsCommand({ Resources: seed.subnetIds, Tags: [{ Key: 'karpenter.sh/discovery' }] }),
      )
      // Karpenter re-reads subnets once a minute through a one-minute cache; a restarted controller now.
      await restartController(bed)
      await waitForCondition(bed, CLASS, 'SubnetsReady', { status: 'False', reason: 'SubnetsNotFound' })
      const run = await doctor(bed)
      const c = check(run, 'discovery-tags')
      assert.equal(c.status, 'fail', summary(run))
      const f = failing(c)[0]!
      assert.equal(f.subject, 'EC2NodeClass/default')
      // Beside Karpenter's own condition, doctor's nodeclass-ready says the same.
      assert.equal(check(run, 'nodeclass-ready').status, 'fail', summary(run))
      assert.match(JSON.stringify(check(run, 'nodeclass-ready').findings), /SubnetsNotFound/)
      const cmd = f.fix!.commands![0]!
      for (const id of seed.subnetIds) assert.ok(cmd.includes(id), `fix should tag ${id}: ${cmd}`)
      assert.equal(run.code, 1)

      // The fix: aws ec2 create-tags --resources <the cluster subnets> --tags Key=karpenter.sh/discovery,Value=demo
      const ids = /--resources ((?:subnet-\S+ ?)+)/.exec(cmd)![1]!.trim().split(' ')
      await aws.ec2.send(
        new CreateTagsCommand({
          Resources: ids,
          Tags: [{ Key: 'karpenter.sh/discovery', Value: CLUSTER_NAME }],
        }),
      )
      // The fix, proven by Karpenter: the subnets found again, the class and pool Ready.
      await restartController(bed)
      await waitForCondition(bed, CLASS, 'SubnetsReady', { status: 'True' })
      await classAndPoolReady()
      const again = await doctor(bed)
      assert.equal(check(again, 'discovery-tags').status, 'pass', summary(again))
      assertNoFailure(again)
    })

    test('an IRSA trust whose :sub names another namespace: irsa-trust-policy fails, the printed trust fixes it', async () => {
      const wrong = controllerTrustPolicy(
        seed.oidcProviderArn,
        seed.oidcIssuer,
        'system:serviceaccount:karpenter:karpenter',
      )
      await aws.iam.send(
        new UpdateAssumeRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyDocument: wrong }),
      )
      const run = await doctor(bed)
      const c = check(run, 'irsa-trust-policy')
      assert.equal(c.status, 'fail', summary(run))
      const f = failing(c)[0]!
      assert.equal(f.subject, seed.controllerRoleArn)
      assert.match(f.message, /system:serviceaccount:karpenter:karpenter/)
      assert.match(f.message, /system:serviceaccount:kube-system:karpenter/)

      const doc = policyDocumentOf(f.fix!.commands![0]!)
      await aws.iam.send(
        new UpdateAssumeRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyDocument: doc }),
      )
      const again = await doctor(bed)
      assert.equal(check(again, 'irsa-trust-policy').status, 'pass', summary(again))
      assertNoFailure(again)
    })

    test('a controller policy without PassRole on the node role: passrole-node-role fails, the printed policy fixes it', async () => {
      const arn = seed.controllerPolicyArns[`KarpenterControllerIAMIntegrationPolicy-${CLUSTER_NAME}`]
      assert.ok(arn, JSON.stringify(seed.controllerPolicyArns))
      const current = await aws.iam.send(new GetPolicyCommand({ PolicyArn: arn }))
      const version = await aws.iam.send(
        new GetPolicyVersionCommand({ PolicyArn: arn, VersionId: current.Policy!.DefaultVersionId }),
      )
      const doc = JSON.parse(decodeURIComponent(version.PolicyVersion!.Document!)) as {
        Statement: { Sid?: string }[]
      }
      doc.Statement = doc.Statement.filter((s) => s.Sid !== 'AllowPassingInstanceRole')
      await aws.iam.send(
        new CreatePolicyVersionCommand({
          PolicyArn: arn,
          PolicyDocument: JSON.stringify(doc),
          SetAsDefault: true,
        }),
      )

      const run = await doctor(bed)
      const c = check(run, 'passrole-node-role')
      assert.equal(c.status, 'fail', summary(run))
      const f = failing(c)[0]!
      assert.match(f.message, new RegExp(seed.nodeRoleName))
      assert.match(
        JSON.stringify(f),
        /local evaluator/,
        'says the local evaluator decided (moto has no simulator)',
      )
      const putPolicy = f.fix!.commands!.find((x) => x.startsWith('aws iam put-role-policy'))!
      const policyName = /--policy-name (\S+)/.exec(putPolicy)![1]!
      await aws.iam.send(
        new PutRolePolicyCommand({
          RoleName: seed.controllerRoleName,
          PolicyName: policyName,
          PolicyDocument: policyDocumentOf(putPolicy),
        }),
      )
      const again = await doctor(bed)
      assert.equal(check(again, 'passrole-node-role').status, 'pass', summary(again))

      // Restore the reference shape for the scenarios that follow.
      await aws.iam.send(
        new DeleteRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyName: policyName }),
      )
      const versions = await aws.iam.send(new ListPolicyVersionsCommand({ PolicyArn: arn }))
      await aws.iam.send(
        new CreatePolicyVersionCommand({
          PolicyArn: arn,
          PolicyDocument: decodeURIComponent(version.PolicyVersion!.Document!),
          SetAsDefault: true,
        }),
      )
      for (const v of versions.Versions ?? []) {
        if (!v.IsDefaultVersion) continue
        await aws.iam.send(new DeletePolicyVersionCommand({ PolicyArn: arn, VersionId: v.VersionId }))
      }
      assertNoFailure(await doctor(bed))
    })

    test('a release moved off IRSA with no Pod Identity association: pod-identity fails (no AWS identity), never passes', async () => {
      // moto serves the Pod Identity API (bed/moto_launcher.py): an empty list is an answer, judged.
      const roleArnKey = 'serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn'
      await withoutIrsaAnnotation(bed, seed)
      await controllerRolledOut(bed)
      const run = await doctor(bed)
      const pi = check(run, 'pod-identity')
      assert.equal(pi.status, 'fail', summary(run))
      assert.match(
        JSON.stringify(pi.findings),
        /has no AWS identity: no IRSA annotation and no Pod Identity association/,
      )
      assert.equal(check(run, 'irsa-trust-policy').status, 'skipped')
      await upgrade(bed, '--set-string', `${roleArnKey}=${seed.controllerRoleArn}`)
      assertNoFailure(await doctor(bed))
    })

    // ---- issue 12 ----

    test('bed: the apiserver certificate is taken only once complete; an empty or cut CA is the "self-signed certificate in certificate chain" flake', async () => {
      const certDir = join(bed.tmpDir, 'pki', 'serving')
      const chain = readFileSync(join(certDir, 'apiserver.crt'), 'utf8')
      const key = readFileSync(join(certDir, 'apiserver.key'), 'utf8')
      assert.equal(servingChain(certDir), bed.kubeCaPem)
      assert.equal(
        (chain.match(/BEGIN CERTIFICATE/g) ?? []).length,
        2,
        'kube-apiserver writes serving cert + CA',
      )
      // The cause, on the real apiserver: what the old wait (file exists → read it) could read while
      // kube-apiserver was still writing the file (os.WriteFile: create+truncate, then write).
      const END = '-----END CERTIFICATE-----'
      const leafOnly = `${chain.slice(0, chain.indexOf(END) + END.length)}\n`
      for (const caPem of ['', leafOnly]) {
        await assert.rejects(
          new KubeClient({ server: bed.kubeServer, token: bed.kubeToken, caPem }).request('GET', '/readyz'),
          /self-signed certificate in certificate chain/,
          `CA of ${caPem.length} bytes`,
        )
      }
      // Every state a reader can find while the pair is written is "not yet"…
      const dir = mkdtempSync(join(bed.tmpDir, 'serving-'))
      const put = (crt?: string, k?: string) => {
        rmSync(join(dir, 'apiserver.crt'), { force: true })
        rmSync(join(dir, 'apiserver.key'), { force: true })
        if (crt !== undefined) writeFileSync(join(dir, 'apiserver.crt'), crt)
        if (k !== undefined) writeFileSync(join(dir, 'apiserver.key'), k)
      }
      const partial: [string | undefined, string | undefined][] = [
        [undefined, undefined],
        ['', undefined],
        [leafOnly, undefined],
        [chain.slice(0, -60), undefined],
        [chain, undefined],
        [chain, ''],
        [chain, key.slice(0, 200)],
        [leafOnly, key],
      ]
      for (const [crt, k] of partial) {
        put(crt, k)
        assert.equal(
          servingChain(dir),
          null,
          `crt ${crt?.length ?? 'absent'} bytes, key ${k?.length ?? 'absent'} bytes`,
        )
      }
      put(chain, key)
      assert.equal(servingChain(dir), chain)
      // …and the wait, started before the files exist, returns the chain only once it is whole.
      put()
      const waited = waitForServingCertificate(dir, { timeoutMs: 10_000, intervalMs: 10 })
      writeFileSync(join(dir, 'apiserver.crt'), '')
      await sleep(100)
      writeFileSync(join(dir, 'apiserver.crt'), leafOnly)
      await sleep(100)
      writeFileSync(join(dir, 'apiserver.crt'), chain)
      await sleep(100)
      writeFileSync(join(dir, 'apiserver.key'), key)
      const pem = await waited
      assert.equal(pem, chain)
      const ready = await new KubeClient({
        server: bed.kubeServer,
        token: bed.kubeToken,
        caPem: pem,
      }).request('GET', '/readyz')
      assert.equal(ready.status, 200)
    })

    test('the JSON report is the karpctl.report/v1 contract: it validates against the shipped schema; SARIF and JUnit carry the version', async () => {
      const schema = JSON.parse(
        readFileSync(join(REPO_ROOT, 'schema', 'report.schema.json'), 'utf8'),
      ) as object
      const validate = new Ajv({ strict: true, allErrors: true, validateFormats: false }).compile(schema)
      const version = (
        JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
      ).version
      const file = join(bed.tmpDir, 'report-snapshot.json')
      const t0 = Date.now()
      const run = await doctor(bed, ['--save-snapshot', file])
      const live = JSON.parse(run.stdout) as Record<string, unknown> & {
        apiCalls: { total: number; byService: Record<string, number> }
      }
      assert.ok(validate(live), JSON.stringify(validate.errors))
      assert.equal(live.schema, 'karpctl.report/v1')
      assert.equal(live.karpctlVersion, version)
      assert.equal(live.source, 'live')
      assert.ok(Date.parse(String(live.generatedAt)) >= t0 - 1000, String(live.generatedAt))
      const wall = Number(live.wallTimeMs)
      assert.ok(wall > 0 && wall <= Date.now() - t0, `wallTimeMs ${wall}`)
      // The calls the run made, as the saved snapshot records them too.
      const facts = JSON.parse(readFileSync(file, 'utf8')) as Facts
      assert.deepEqual(live.apiCalls.byService, facts.meta.calls)
      assert.ok(live.apiCalls.total > 20, JSON.stringify(live.apiCalls))
      for (const service of ['sts', 'eks', 'iam', 'ec2', 'sqs', 'eventbridge', 'kube'])
        assert.ok(live.apiCalls.byService[service]! > 0, `${service}: ${JSON.stringify(live.apiCalls)}`)

      const snap = await karpctl(bed, ['doctor', '--snapshot', file, '--json'])
      const fromSnapshot = JSON.parse(snap.stdout) as Record<string, unknown>
      assert.ok(validate(fromSnapshot), JSON.stringify(validate.errors))
      assert.equal(fromSnapshot.source, 'snapshot')
      assert.deepEqual(fromSnapshot.apiCalls, { total: 0, byService: {} })
      assert.equal(fromSnapshot.factsCollectedAt, facts.meta.collectedAt)

      const target = ['--cluster', CLUSTER_NAME, '--region', REGION, '--kube-context', bed.kubeContext]
      const junit = await karpctl(bed, ['doctor', ...target, '--output', 'junit'])
      assert.ok(junit.stdout.includes(`<property name="karpctl.version" value="${version}"/>`), junit.stdout)
      const sarif = await karpctl(bed, ['doctor', '--snapshot', file, '--output', 'sarif'])
      const driver = (JSON.parse(sarif.stdout) as { runs: { tool: { driver: { version: string } } }[] })
        .runs[0]!.tool.driver
      assert.equal(driver.version, version)
    })

    test("settings.interruptionQueue set to the queue's ARN: only interruption-queue fails (controller-policy judges the real queue), the printed name fixes it", async () => {
      await upgrade(bed, '--set-string', `settings.interruptionQueue=${seed.queueArn}`)
      // Karpenter with the ARN: GetQueueUrl(QueueName=<the ARN>) fails, it logs so and reads nothing
      // (v1.14.1 pkg/controllers/interruption/controller.go, "failed to create valid sqs provider").
      await waitFor(
        'Karpenter logging that it has no interruption queue',
        async () => controllerLog(bed).some((l) => l.message === 'failed to create valid sqs provider'),
        { timeoutMs: 120_000, intervalMs: 500, proc: bed.procs.karpenter },
      )
      await aws.sqs.send(new SendMessageCommand({ QueueUrl: seed.queueUrl, MessageBody: PROBE }))
      const run = await doctor(bed)
      assert.equal(await queued(aws, seed.queueUrl), 1, 'the message waits: Karpenter reads no queue')
      assert.deepEqual(
        run.report.checks.filter((c) => c.status === 'fail').map((c) => c.id),
        ['interruption-queue'],
        summary(run),
      )
      for (const id of ['controller-policy', 'interruption-rules'])
        assert.equal(check(run, id).status, 'pass', `${id}:\n${summary(run)}`)
      assert.doesNotMatch(JSON.stringify(check(run, 'controller-policy')), /:arn:aws:sqs:/)
      const f = failing(check(run, 'interruption-queue'))[0]!
      assert.match(
        f.message,
        new RegExp(`is a queue ARN \\(${seed.queueArn}\\); Karpenter expects the queue name`),
      )
      const name = /--set settings\.interruptionQueue=(\S+)$/.exec(f.fix!.commands!.at(-1)!)?.[1]
      assert.equal(name, seed.queueName)
      await upgrade(bed, '--set', `settings.interruptionQueue=${name}`)
      // The fix, proven by Karpenter: it reads the queue and takes the message off (an unparsable one
      // is deleted after it is logged).
      await waitFor(
        'Karpenter taking the message off its queue',
        async () => (await queued(aws, seed.queueUrl)) === 0,
        {
          timeoutMs: 120_000,
          intervalMs: 1000,
          proc: bed.procs.karpenter,
        },
      )
      assert.ok(
        !controllerLog(bed).some((l) => l.message === 'failed to create valid sqs provider'),
        'the new controller found its queue',
      )
      assertNoFailure(await doctor(bed))
    })

    test('the rules sending to an old queue (the capacity-reservation one is not needed here: no reservation in use, issue 35): each named with that queue, re-targeted in place by the printed put-targets/remove-targets, no rule added', async () => {
      const needed = seed.ruleNames.filter((n) => !/CapacityReservation/.test(n))
      const old = await aws.sqs.send(new CreateQueueCommand({ QueueName: `${CLUSTER_NAME}-old` }))
      const oldArn = `arn:aws:sqs:${REGION}:${seed.accountId}:${CLUSTER_NAME}-old`
      for (const rule of needed) {
        await aws.events.send(
          new PutTargetsCommand({ Rule: rule, Targets: [{ Id: 'OldQueue', Arn: oldArn }] }),
        )
        await aws.events.send(
          new RemoveTargetsCommand({ Rule: rule, Ids: ['KarpenterInterruptionQueueTarget'] }),
        )
      }
      const rulesBefore = (await aws.events.send(new ListRulesCommand({}))).Rules?.length
      const run = await doctor(bed)
      const c = check(run, 'interruption-rules')
      assert.equal(c.status, 'fail', summary(run))
      const fails = failing(c)
      assert.equal(fails.length, needed.length, summary(run))
      for (const f of fails) {
        const rule = String(f.evidence?.rule)
        assert.ok(needed.includes(rule), rule)
        assert.match(
          f.message,
          new RegExp(`sends to queue ${CLUSTER_NAME}-old \\(${oldArn}\\), not to the interruption queue`),
        )
        assert.ok(!f.fix!.commands!.some((x) => /put-rule/.test(x)), f.fix!.commands!.join('\n'))
        for (const cmd of f.fix!.commands!) await applyEvents(aws, cmd)
      }
      const again = await doctor(bed)
      assert.equal(check(again, 'interruption-rules').status, 'pass', summary(again))
      assert.equal(
        (await aws.events.send(new ListRulesCommand({}))).Rules?.length,
        rulesBefore,
        'no rule added',
      )
      for (const rule of needed) {
        const targets = (await aws.events.send(new ListTargetsByRuleCommand({ Rule: rule }))).Targets ?? []
        assert.deepEqual(
          targets.map((t) => t.Arn),
          [seed.queueArn],
          `${rule}: the old queue's target is gone`,
        )
      }
      await aws.sqs.send(new DeleteQueueCommand({ QueueUrl: old.QueueUrl }))
      assertNoFailure(again)
    })

    test('a permissions boundary without iam:PassRole and ec2:CreateFleet: both checks fail on the local evaluator naming it; the one printed version fixes both; the human report shows the caveats', async () => {
      const boundaryDoc = {
        Version: '2012-10-17',
        Statement: [
          { Sid: 'Ceiling', Effect: 'Allow', NotAction: ['iam:PassRole', 'ec2:CreateFleet'], Resource: '*' },
        ],
      }
      const created = await aws.iam.send(
        new CreatePolicyCommand({
          PolicyName: `KarpenterBoundary-${CLUSTER_NAME}`,
          PolicyDocument: JSON.stringify(boundaryDoc),
        }),
      )
      const boundaryArn = created.Policy!.Arn!
      await aws.iam.send(
        new PutRolePermissionsBoundaryCommand({
          RoleName: seed.controllerRoleName,
          PermissionsBoundary: boundaryArn,
        }),
      )
      const run = await doctor(bed)
      const pass = check(run, 'passrole-node-role')
      assert.equal(pass.status, 'fail', summary(run))
      const pf = failing(pass)[0]!
      assert.match(
        pf.message,
        new RegExp(
          `its permissions boundary KarpenterBoundary-${CLUSTER_NAME} does not allow iam:PassRole on it, though its policies do`,
        ),
      )
      assert.match(pf.message, /decided by local evaluator \(simulator unavailable/)
      const policy = check(run, 'controller-policy')
      assert.equal(policy.status, 'fail', summary(run))
      const cf = failing(policy)[0]!
      assert.equal(cf.subject, boundaryArn)
      assert.match(cf.message, /ec2:CreateFleet/)
      // One repair, printed by both: a new default version of the boundary.
      assert.deepEqual(pf.fix!.commands, cf.fix!.commands)
      const cmd = cf.fix!.commands![0]!
      assert.ok(
        cmd.startsWith(`aws iam create-policy-version --policy-arn ${boundaryArn} --set-as-default`),
        cmd,
      )
      await aws.iam.send(
        new CreatePolicyVersionCommand({
          PolicyArn: boundaryArn,
          PolicyDocument: policyDocumentOf(cmd),
          SetAsDefault: true,
        }),
      )
      const again = await doctor(bed)
      assert.equal(check(again, 'passrole-node-role').status, 'pass', summary(again))
      assert.equal(check(again, 'controller-policy').status, 'pass', summary(again))
      assert.match(
        check(again, 'passrole-node-role').findings[0]!.message,
        new RegExp(
          `identity policies ∩ permissions boundary KarpenterBoundary-${CLUSTER_NAME}; SCPs and session policies not seen`,
        ),
      )
      // The caveats of the passes, in the human report (not only in the JSON evidence).
      const target = ['--cluster', CLUSTER_NAME, '--region', REGION, '--kube-context', bed.kubeContext]
      const human = (await karpctl(bed, ['doctor', ...target])).stdout.split('\n')
      const i = human.indexOf('  ✔ passrole-node-role — The controller may pass every node role to EC2')
      assert.ok(i >= 0, human.join('\n'))
      assert.match(
        human[i + 1] ?? '',
        /^ {4}caveat: karpctl's local evaluator does not see service control policies/,
      )

      await aws.iam.send(new DeleteRolePermissionsBoundaryCommand({ RoleName: seed.controllerRoleName }))
      const versions = await aws.iam.send(new ListPolicyVersionsCommand({ PolicyArn: boundaryArn }))
      for (const v of versions.Versions ?? [])
        if (!v.IsDefaultVersion)
          await aws.iam.send(
            new DeletePolicyVersionCommand({ PolicyArn: boundaryArn, VersionId: v.VersionId }),
          )
      await aws.iam.send(new DeletePolicyCommand({ PolicyArn: boundaryArn }))
      assertNoFailure(await doctor(bed))
    })

    test('an IRSA trust with StringLike :sub = system:serviceaccount:*:*: one failing finding (the security one), whose trust fixes it', async () => {
      const host = seed.oidcIssuer.replace(/^https:\/\//, '')
      const wide = {
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Federated: seed.oidcProviderArn },
            Action: 'sts:AssumeRoleWithWebIdentity',
            Condition: {
              StringLike: { [`${host}:sub`]: 'system:serviceaccount:*:*' },
              StringEquals: { [`${host}:aud`]: 'sts.amazonaws.com' },
            },
          },
        ],
      }
      await aws.iam.send(
        new UpdateAssumeRolePolicyCommand({
          RoleName: seed.controllerRoleName,
          PolicyDocument: JSON.stringify(wide),
        }),
      )
      const run = await doctor(bed)
      const c = check(run, 'irsa-trust-policy')
      assert.equal(c.status, 'fail', summary(run))
      const fails = failing(c)
      assert.equal(fails.length, 1, JSON.stringify(c.findings, null, 1))
      assert.match(
        fails[0]!.message,
        /^security: trust of .+ uses StringLike on .+:sub = "system:serviceaccount:\*:\*"/,
      )
      assert.doesNotMatch(fails[0]!.message, /but the controller runs as/)
      await aws.iam.send(
        new UpdateAssumeRolePolicyCommand({
          RoleName: seed.controllerRoleName,
          PolicyDocument: policyDocumentOf(fails[0]!.fix!.commands![0]!),
        }),
      )
      const again = await doctor(bed)
      assert.equal(check(again, 'irsa-trust-policy').status, 'pass', summary(again))
      assertNoFailure(again)
    })

    test('an EC2NodeClass encrypting with a customer managed key whose policy lacks the node role: ebs-kms-key names it; the printed key policy fixes it', async () => {
      const kms = new KMSClient(awsClientConfig(bed))
      const controller = (
        sid: string,
        action: string | string[],
        condition: Record<string, Record<string, string>>,
      ) => ({
        Sid: sid,
        Effect: 'Allow',
        Principal: { AWS: seed.controllerRoleArn },
        Action: action,
        Resource: '*',
        Condition: condition,
      })
      // No root kms:* statement: the key policy alone decides (IAM policies do not count).
      const policy = {
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'KeyAdmins',
            Effect: 'Allow',
            Principal: { AWS: `arn:aws:iam::${seed.accountId}:root` },
            Action: ['kms:Describe*', 'kms:Get*', 'kms:List*', 'kms:Put*'],
            Resource: '*',
          },
          controller('KarpenterEbsEncryption', ['kms:GenerateDataKeyWithoutPlaintext', 'kms:Decrypt'], {
            StringEquals: { 'kms:ViaService': `ec2.${REGION}.amazonaws.com` },
          }),
          controller('KarpenterEbsGrants', 'kms:CreateGrant', {
            Bool: { 'kms:GrantIsForAWSResource': 'true' },
          }),
        ],
      }
      const key = await kms.send(
        new CreateKeyCommand({ Policy: JSON.stringify(policy), Description: 'karpenter ebs' }),
      )
      const keyArn = key.KeyMetadata!.Arn!
      await kms.send(
        new CreateAliasCommand({ AliasName: 'alias/karpenter-ebs', TargetKeyId: key.KeyMetadata!.KeyId! }),
      )
      const ncPath = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default'
      // The alias, as users write it: DescribeKey resolves it to the key.
      await bed.kube.mergePatch(ncPath, {
        spec: {
          blockDeviceMappings: [
            {
              deviceName: '/dev/xvda',
              ebs: {
                encrypted: true,
                kmsKeyID: 'alias/karpenter-ebs',
                volumeSize: '20Gi',
                volumeType: 'gp3',
              },
            },
          ],
        },
      })
      try {
        await classAndPoolReady()
        const run = await doctor(bed)
        const c = check(run, 'ebs-kms-key')
        assert.equal(c.status, 'warn', summary(run))
        assert.equal(
          c.findings.find((f) => f.subject === seed.controllerRoleArn)?.status,
          'pass',
          summary(run),
        )
        const node = c.findings.find((f) => f.subject === seed.nodeRoleArn)
        assert.equal(node?.status, 'warn', summary(run))
        assert.match(
          node.message,
          new RegExp(`node role ${seed.nodeRoleName} .* may not use KMS key ${keyArn}`),
        )
        const command = node.fix!.commands![0]!
        assert.match(
          command,
          new RegExp(`^aws kms put-key-policy --key-id ${keyArn} --policy-name default --policy '`),
        )
        // The fix's effect: aws kms put-key-policy with the printed policy (every existing statement kept).
        const printed = /--policy '(.+)' --region/.exec(command)![1]!
        await kms.send(new PutKeyPolicyCommand({ KeyId: keyArn, PolicyName: 'default', Policy: printed }))
        const again = await doctor(bed)
        assert.equal(check(again, 'ebs-kms-key').status, 'pass', summary(again))
        assertNoFailure(again)
        // A key that does not exist: fail, not unknown.
        await bed.kube.mergePatch(ncPath, {
          spec: {
            blockDeviceMappings: [
              {
                deviceName: '/dev/xvda',
                ebs: { encrypted: true, kmsKeyID: 'alias/no-such-key', volumeSize: '20Gi' },
              },
            ],
          },
        })
        // Karpenter v1.14.1 does not look the key up: the class stays Ready (the launch would fail on
        // EC2); doctor is what says so before a node is asked for.
        await classAndPoolReady()
        const missing = await doctor(bed)
        assert.equal(check(missing, 'ebs-kms-key').status, 'fail', summary(missing))
        assert.equal(check(missing, 'nodeclass-ready').status, 'pass', summary(missing))
        assert.match(
          failing(check(missing, 'ebs-kms-key'))[0]!.message,
          /alias\/no-such-key .* does not exist/,
        )
      } finally {
        await bed.kube.mergePatch(ncPath, { spec: { blockDeviceMappings: null } })
      }
      await classAndPoolReady()
      assert.equal(check(await doctor(bed), 'ebs-kms-key').status, 'skipped')
    })

    test('an SSE-KMS interruption queue whose key policy names neither EventBridge nor the controller: interruption-queue and controller-policy fail; the printed key policy fixes both', async () => {
      const kms = new KMSClient(awsClientConfig(bed))
      const policy = {
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'KeyAdmins',
            Effect: 'Allow',
            Principal: { AWS: `arn:aws:iam::${seed.accountId}:role/Admin` },
            Action: 'kms:*',
            Resource: '*',
          },
        ],
      }
      const key = await kms.send(
        new CreateKeyCommand({ Policy: JSON.stringify(policy), Description: 'karpenter queue' }),
      )
      const keyArn = key.KeyMetadata!.Arn!
      await kms.send(
        new CreateAliasCommand({ AliasName: 'alias/karpenter-queue', TargetKeyId: key.KeyMetadata!.KeyId! }),
      )
      // moto 5.2.1 drops the queue policy on a SetQueueAttributes that does not repeat it: pass it along.
      const { Attributes } = await aws.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: seed.queueUrl, AttributeNames: ['Policy'] }),
      )
      const setKey = (id: string) =>
        aws.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: seed.queueUrl,
            Attributes: { KmsMasterKeyId: id, Policy: Attributes!.Policy! },
          }),
        )
      await setKey('alias/karpenter-queue')
      try {
        const run = await doctor(bed)
        const q = failing(check(run, 'interruption-queue'))
        assert.equal(q.length, 1, summary(run))
        assert.match(
          q[0]!.message,
          /does not let events\.amazonaws\.com use it for kms:GenerateDataKey, kms:Decrypt/,
        )
        const c = failing(check(run, 'controller-policy'))
        assert.equal(c.length, 1, summary(run))
        assert.match(
          c[0]!.message,
          new RegExp(`controller role ${seed.controllerRoleName} may not use KMS key ${keyArn}`),
        )
        // One command on both findings: the current policy plus both statements.
        assert.deepEqual(q[0]!.fix!.commands, c[0]!.fix!.commands)
        const printed = /--policy '(.+)' --region/.exec(q[0]!.fix!.commands![0]!)![1]!
        await kms.send(new PutKeyPolicyCommand({ KeyId: keyArn, PolicyName: 'default', Policy: printed }))
        const again = await doctor(bed)
        assert.equal(check(again, 'interruption-queue').status, 'pass', summary(again))
        assert.equal(check(again, 'controller-policy').status, 'pass', summary(again))
        assertNoFailure(again)
      } finally {
        await setKey('')
      }
      assertNoFailure(await doctor(bed))
    })

    test('aws-node with its own IRSA role: a node role without AmazonEKS_CNI_Policy passes; that role without it fails, and the printed attach fixes it', async () => {
      const cniPolicy = 'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy'
      const cniRole = 'AmazonEKSVPCCNIRole-e2e'
      await aws.iam.send(
        new CreateRoleCommand({
          RoleName: cniRole,
          AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
        }),
      )
      await aws.iam.send(new DetachRolePolicyCommand({ RoleName: seed.nodeRoleName, PolicyArn: cniPolicy }))
      const saPath = '/api/v1/namespaces/kube-system/serviceaccounts/aws-node'
      await bed.kube.create({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: {
          name: 'aws-node',
          namespace: 'kube-system',
          annotations: { 'eks.amazonaws.com/role-arn': `arn:aws:iam::${seed.accountId}:role/${cniRole}` },
        },
      })
      try {
        const run = await doctor(bed)
        const f = failing(check(run, 'node-role'))
        assert.deepEqual(
          f.map((x) => x.subject),
          [cniRole],
          summary(run),
        )
        assert.match(
          f[0]!.message,
          /aws-node \(the VPC CNI\) uses its own role .* which lacks AmazonEKS_CNI_Policy/,
        )
        const command = f[0]!.fix!.commands![0]!
        assert.equal(command, `aws iam attach-role-policy --role-name ${cniRole} --policy-arn ${cniPolicy}`)
        // The fix's effect, then node-role passes with no CNI policy on the node role.
        await aws.iam.send(new AttachRolePolicyCommand({ RoleName: cniRole, PolicyArn: cniPolicy }))
        const again = await doctor(bed)
        assert.equal(check(again, 'node-role').status, 'pass', summary(again))
        assert.match(
          check(again, 'node-role')
            .findings.map((x) => x.message)
            .join('\n'),
          /gets its permissions from its own role AmazonEKSVPCCNIRole-e2e \(IRSA annotation\)/,
        )
        assertNoFailure(again)
      } finally {
        await bed.kube.delete(saPath)
        await aws.iam.send(new AttachRolePolicyCommand({ RoleName: seed.nodeRoleName, PolicyArn: cniPolicy }))
        await aws.iam
          .send(new DetachRolePolicyCommand({ RoleName: cniRole, PolicyArn: cniPolicy }))
          .catch(() => {})
        await aws.iam.send(new DeleteRoleCommand({ RoleName: cniRole }))
      }
      assertNoFailure(await doctor(bed))
    })

    test('a cluster-autoscaler discovering the managed node groups beside Karpenter: a warning naming the group; the printed scale-down clears it', async () => {
      const subnets = seed.subnetIds
      const ng = await aws.eks.send(
        new CreateNodegroupCommand({
          clusterName: CLUSTER_NAME,
          nodegroupName: 'system',
          nodeRole: seed.nodeRoleArn,
          subnets,
          scalingConfig: { minSize: 2, maxSize: 4, desiredSize: 2 },
        }),
      )
      const asg = ng.nodegroup?.resources?.autoScalingGroups?.[0]?.name
      assert.ok(asg, `moto gave the node group no Auto Scaling group: ${JSON.stringify(ng.nodegroup)}`)
      const path =
        '/apis/apps/v1/namespaces/kube-system/deployments/cluster-autoscaler-aws-cluster-autoscaler'
      // What the cluster-autoscaler chart deploys (only the fields that matter; no pod needs to run).
      await bed.kube.create(clusterAutoscalerDeployment(1, CLUSTER_NAME))
      try {
        const run = await doctor(bed)
        const c = check(run, 'cluster-autoscaler')
        assert.equal(c.status, 'warn', summary(run))
        assert.match(
          c.findings[0]!.message,
          new RegExp(`scales ${asg} \\(node group system\\) while Karpenter provisions for NodePool default`),
        )
        assertNoFailure(run) // a warning, not a failure: exit 0
        // The fix's effect: kubectl annotate … karpctl.io/scaled-down-from-replicas=1 && kubectl scale … --replicas=0
        const [annotate, scale] = c.findings[0]!.fix!.commands!
        assert.match(annotate!, /karpctl.io\/scaled-down-from-replicas=1 --overwrite$/)
        assert.match(scale!, /--replicas=0$/)
        await bed.kube.mergePatch(path, {
          metadata: { annotations: { 'karpctl.io/scaled-down-from-replicas': '1' } },
          spec: { replicas: 0 },
        })
        const again = await doctor(bed)
        assert.equal(check(again, 'cluster-autoscaler').status, 'pass', summary(again))
        assert.match(check(again, 'cluster-autoscaler').findings[0]!.message, /scaled to 0/)
      } finally {
        await bed.kube.request('DELETE', path)
        await aws.eks.send(new DeleteNodegroupCommand({ clusterName: CLUSTER_NAME, nodegroupName: 'system' }))
      }
    })

    test('the webhook-era chart (v1.0.14) without the 8443 rule: sg-webhook-8443 fails, authorizing it fixes it', async () => {
      await helm(bed, ['uninstall', 'karpenter', '--namespace', 'kube-system', '--wait'])
      // The Deployment gone, the real controller stops; the bed builds only 1.14.1, so the 1.0.14
      // Deployment below runs nothing and nobody reports it available (nothing played): this scenario
      // asks only sg-webhook-8443 and karpenter-version, which read the chart and AWS, not the controller.
      await waitFor('the real controller stopped', async () => !bed.karpenter!.controller.proc, {
        timeoutMs: 60_000,
      })
      const values = gettingStartedValues(seed)
      await helm(bed, [
        'install',
        'karpenter',
        karpenterChartDir('1.0.14'),
        '--namespace',
        'kube-system',
        '-f',
        writeValues(bed, values),
      ])
      // Revoke the rule exactly as EC2 describes it (moto matches descriptions too).
      const sg = await aws.ec2.send(
        new DescribeSecurityGroupsCommand({ GroupIds: [seed.nodeSecurityGroupId] }),
      )
      const rule = sg.SecurityGroups?.[0]?.IpPermissions?.find((p) => p.FromPort === 8443)
      if (rule)
        await aws.ec2.send(
          new RevokeSecurityGroupIngressCommand({ GroupId: seed.nodeSecurityGroupId, IpPermissions: [rule] }),
        )
      const run = await doctor(bed, ['--only', 'sg-webhook-8443,karpenter-version'])
      const c = check(run, 'sg-webhook-8443')
      assert.equal(c.status, 'fail', summary(run))
      const f = failing(c)[0]!
      assert.equal(f.subject, seed.nodeSecurityGroupId)
      const cmd = f.fix!.commands![0]!
      assert.match(
        cmd,
        new RegExp(
          `--group-id ${seed.nodeSecurityGroupId} --protocol tcp --port 8443 --source-group ${seed.clusterSecurityGroupId}`,
        ),
      )
      assert.equal(check(run, 'karpenter-version').status, 'warn')
      const old = await bed.kube.get('/apis/apps/v1/namespaces/kube-system/deployments/karpenter')
      assert.equal(old?.status?.availableReplicas ?? 0, 0, 'no 1.0.14 controller runs, none is played')
      assert.equal(bed.karpenter!.controller.proc, undefined)

      // The fix: aws ec2 authorize-security-group-ingress --group-id <node SG> --protocol tcp --port 8443 --source-group <cluster SG>
      await aws.ec2.send(
        new AuthorizeSecurityGroupIngressCommand({
          GroupId: seed.nodeSecurityGroupId,
          IpPermissions: [webhookRule(seed)],
        }),
      )
      const again = await doctor(bed, ['--only', 'sg-webhook-8443'])
      assert.equal(check(again, 'sg-webhook-8443').status, 'pass', summary(again))
    })

    test('bad input against the live bed: unknown cluster and unknown kube context are one-line errors, exit 2', async () => {
      const r1 = await karpctl(bed, [
        'doctor',
        '--cluster',
        'nope',
        '--region',
        REGION,
        '--kube-context',
        bed.kubeContext,
      ])
      assert.equal(r1.code, 2)
      assert.match(
        r1.stderr,
        /EKS cluster "nope" not found in us-west-2: check --cluster and --region \(clusters there: demo\)/,
      )
      assert.doesNotMatch(r1.stderr, /\n\s+at /)
      const r2 = await karpctl(bed, [
        'doctor',
        '--cluster',
        CLUSTER_NAME,
        '--region',
        REGION,
        '--kube-context',
        'nope',
      ])
      assert.equal(r2.code, 2)
      assert.match(r2.stderr, /kube context "nope" does not exist/)
    })
  },
)

const CLASS = `${EC2NODECLASSES}/default`
const POOL = `${NODEPOOLS}/default`
/** A message Karpenter cannot parse: it logs it and deletes it, which is how it is seen to read the queue. */
const PROBE = JSON.stringify({ source: 'karpctl.e2e', 'detail-type': 'queue probe', detail: {} })

/** Messages on the queue, visible or being received. */
async function queued(aws: AwsClients, queueUrl: string): Promise<number> {
  const { Attributes: a } = await aws.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  )
  return Number(a?.ApproximateNumberOfMessages ?? 0) + Number(a?.ApproximateNumberOfMessagesNotVisible ?? 0)
}

/**
 * `helm upgrade karpenter <the 1.14.1 chart> -n kube-system --reuse-values <extra>` with the real helm,
 * then the rollout taken by the real controller (its /readyz).
 */
const upgrade = async (bed: Bed, ...extra: string[]) => {
  const r = await helm(bed, [
    'upgrade',
    'karpenter',
    karpenterChartDir('1.14.1'),
    '--namespace',
    'kube-system',
    '--reuse-values',
    ...extra,
  ])
  await controllerRolledOut(bed)
  return r
}

/** Applies an `aws events put-targets | remove-targets | enable-rule` fix command as printed. */
async function applyEvents(aws: AwsClients, command: string): Promise<void> {
  const arg = (name: string) => new RegExp(`--${name} (\\S+)`).exec(command)?.[1]
  const rule = arg('rule')!
  if (command.startsWith('aws events put-targets ')) {
    const [, id, arn] = /--targets Id=([^,\s]+),Arn=(\S+)/.exec(command)!
    await aws.events.send(new PutTargetsCommand({ Rule: rule, Targets: [{ Id: id!, Arn: arn! }] }))
  } else if (command.startsWith('aws events remove-targets ')) {
    const ids = /--ids ((?:(?!--)\S+ ?)+)/.exec(command)![1]!.trim().split(' ')
    await aws.events.send(new RemoveTargetsCommand({ Rule: rule, Ids: ids }))
  } else {
    throw new Error(`not an events fix this test applies: ${command}`)
  }
}

const webhookRule = (seed: SeedResult) => ({
  IpProtocol: 'tcp',
  FromPort: 8443,
  ToPort: 8443,
  UserIdGroupPairs: [{ GroupId: seed.clusterSecurityGroupId }],
})

function writeValues(bed: Bed, values: object): string {
  const file = join(bed.tmpDir, `values-${Date.now()}.json`)
  // JSON is YAML: helm reads it with every string kept a string.
  writeFileSync(file, JSON.stringify(values))
  return file
}
