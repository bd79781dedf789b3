// karpctl teardown on the real bed: install → two tenants → teardown must leave moto and the apiserver
// exactly as they were before the install — look-alikes (same-looking names without karpctl's tags,
// another cluster's karpctl resources, a discovery tag that was there before) untouched — and a teardown
// killed half-way, run again, must end the same. The real Karpenter 1.14.1 controller runs throughout
// (`karpenter: true`): it marks the classes Ready the install and the tenants wait for, and it lifts the
// EC2NodeClasses' finalizers teardown waits on — across the killed run and its re-run.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { CreateTagsCommand } from '@aws-sdk/client-ec2'
import { CreateRoleCommand } from '@aws-sdk/client-iam'
import { CreateQueueCommand } from '@aws-sdk/client-sqs'
import {
  awsClients,
  CLUSTER_NAME,
  DISCOVERY_TAG,
  karpenterFixtures,
  inventory,
  bareClusterBed,
  REGION,
  REPO_ROOT,
  runKarpctl,
  type Bed,
} from './bed/index.js'

const target = (bed: Bed) => [
  '--cluster',
  CLUSTER_NAME,
  '--region',
  REGION,
  '--kube-context',
  bed.kubeContext,
]
const envOf = (bed: Bed) => ({ NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}` })
const karpctl = (bed: Bed, args: string[]) =>
  runKarpctl(bed, [...args, ...target(bed)], { env: envOf(bed), timeoutMs: 300_000 })
const CHARTS = () => join(karpenterFixtures(), 'v1.14.1', 'charts')

async function installWithTenants(bed: Bed, tenants: string[]) {
  const i = await karpctl(bed, ['install', '--chart-dir', CHARTS(), '--yes', '--timeout', '60'])
  assert.equal(i.code, 0, i.stderr)
  for (const t of tenants) {
    const r = await karpctl(bed, ['tenant', 'add', t, '--yes', '--timeout', '30'])
    assert.equal(r.code, 0, r.stderr)
  }
}

describe('karpctl teardown on moto, a real apiserver, helm, Karpenter', { timeout: 20 * 60_000 }, () => {
  test('install → 2 tenants → teardown → the pre-install inventory exactly, look-alikes kept; again → nothing; killed half-way → re-run → the same', async (t) => {
    const { bed, seed } = await bareClusterBed(t, { karpenter: true })
    const aws = awsClients(bed)
    // Look-alikes: a role named like a tenant's without karpctl's tags, another cluster's karpctl queue,
    // and a discovery tag that was on a subnet before karpctl.
    await aws.iam.send(
      new CreateRoleCommand({
        RoleName: 'KarpenterNodeRole-demo-lookalike',
        AssumeRolePolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        }),
      }),
    )
    await aws.sqs.send(
      new CreateQueueCommand({
        QueueName: 'other',
        tags: { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': 'other' },
      }),
    )
    await aws.ec2.send(
      new CreateTagsCommand({
        Resources: [seed.net.subnetIds[0]!],
        Tags: [{ Key: DISCOVERY_TAG, Value: CLUSTER_NAME }],
      }),
    )
    const pre = await inventory(bed, seed.net)

    await installWithTenants(bed, ['alpha', 'beta'])
    const dry = await karpctl(bed, ['teardown', '--dry-run'])
    assert.equal(dry.code, 0, dry.stderr)
    // What a delete takes, each with its value: the role's inline policies go with it.
    assert.match(
      dry.stdout,
      /- delete {4}IAM role KarpenterControllerRole-demo\n {8}inline policy: KarpenterController\S+-demo → \(removed\)\n/,
    )
    assert.match(
      dry.stdout,
      /= unchanged IAM role KarpenterNodeRole-demo-lookalike\n {8}note: kept: karpctl did not make it/,
    )
    assert.match(dry.stdout, /AWSServiceRoleForEC2Spot\n {8}note: kept: account-wide/)
    const noTty = await karpctl(bed, ['teardown'])
    assert.equal(noTty.code, 2)
    assert.match(noTty.stderr, /pass --confirm demo to apply it without a terminal/)

    const down = await karpctl(bed, ['teardown', '--confirm', CLUSTER_NAME])
    assert.equal(down.code, 0, `${down.stdout}\n${down.stderr}`)
    assert.deepEqual(await inventory(bed, seed.net), pre, 'the pre-install inventory, look-alikes included')

    const again = await karpctl(bed, ['teardown', '--confirm', CLUSTER_NAME])
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stdout, /Nothing of karpctl's is left on cluster demo/)

    await installWithTenants(bed, ['alpha'])
    const killed = await new Promise<string>((resolve) => {
      const child = spawn(
        process.execPath,
        [join(REPO_ROOT, 'bin', 'run.js'), 'teardown', ...target(bed), '--confirm', CLUSTER_NAME],
        { env: bed.childEnv(envOf(bed)), stdio: ['ignore', 'ignore', 'pipe'] },
      )
      let err = ''
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString()
        if ((err.match(/^✔ /gm) ?? []).length >= 5) child.kill('SIGKILL')
      })
      child.on('close', () => resolve(err))
    })
    t.diagnostic(killed)
    const resumed = await karpctl(bed, ['teardown', '--confirm', CLUSTER_NAME])
    assert.equal(resumed.code, 0, resumed.stderr)
    assert.deepEqual(await inventory(bed, seed.net), pre, 'a killed teardown, run again, ends the same')
  })
})
