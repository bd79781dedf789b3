// The interruption queue setting, derived once for the collector and every check (issue 12, item 1).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionQueueOf, parseQueueSetting } from '../../../src/facts/collect-interruption.js'
import type { Deployment, HelmRelease } from '../../../src/facts/types.js'
import { ACCOUNT, healthyFacts, QUEUE_ARN, REGION } from '../../helpers/facts.js'

const scope = { partition: 'aws', region: REGION, accountId: ACCOUNT }
const parse = (v: string) => parseQueueSetting(v, 'settings.interruptionQueue', scope)

test('a name is a name, with its ARN in the cluster account and region', () => {
  assert.deepEqual(parse('demo'), {
    value: 'demo',
    source: 'settings.interruptionQueue',
    form: 'name',
    name: 'demo',
    arn: QUEUE_ARN,
  })
  assert.equal(parse('Karpenter_demo-1.fifo').form, 'name')
})

test('an ARN or URL is malformed but still says which queue was meant', () => {
  assert.deepEqual(parse(QUEUE_ARN), {
    value: QUEUE_ARN,
    source: 'settings.interruptionQueue',
    form: 'arn',
    name: 'demo',
    arn: QUEUE_ARN,
  })
  for (const url of [
    `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/demo`,
    `https://${REGION}.queue.amazonaws.com/${ACCOUNT}/demo`,
  ]) {
    const ref = parse(url)
    assert.equal(ref.form, 'url')
    assert.equal(ref.name, 'demo')
    assert.equal(ref.arn, QUEUE_ARN)
    assert.equal(ref.elsewhere, undefined)
  }
})

test('a URL or ARN of another account or region is marked elsewhere (that queue is not read here)', () => {
  const other = parse('arn:aws:sqs:eu-west-1:999999999999:demo')
  assert.equal(other.elsewhere, true)
  assert.equal(other.arn, 'arn:aws:sqs:eu-west-1:999999999999:demo')
  assert.equal(parse(`https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/demo`).elsewhere, true)
})

test('something that is neither: invalid, with the last part as the name when it is one', () => {
  assert.deepEqual(parse('my queue!'), {
    value: 'my queue!',
    source: 'settings.interruptionQueue',
    form: 'invalid',
  })
  const ref = parse(`sqs.${REGION}.amazonaws.com/${ACCOUNT}/demo`)
  assert.equal(ref.form, 'invalid')
  assert.equal(ref.name, 'demo')
  assert.equal(parse('arn:aws:sns:us-west-2:123456789012:topic').name, undefined)
})

test('where the setting comes from: chart value, then the v0.x key, then the Deployment env; none → null', () => {
  const f = healthyFacts()
  const release = structuredClone((f.kube.release.ok && f.kube.release.value) as HelmRelease)
  const deployment = structuredClone((f.kube.deployment.ok && f.kube.deployment.value) as Deployment)
  assert.equal(interruptionQueueOf(release, deployment, scope)?.source, 'settings.interruptionQueue')
  const settings = release.computedValues.settings as Record<string, unknown>
  settings.interruptionQueue = '  '
  settings.aws = { interruptionQueueName: 'legacy' }
  assert.deepEqual(
    [
      interruptionQueueOf(release, deployment, scope)?.source,
      interruptionQueueOf(release, deployment, scope)?.name,
    ],
    ['settings.aws.interruptionQueueName', 'legacy'],
  )
  delete settings.aws
  assert.equal(interruptionQueueOf(release, deployment, scope)?.source, 'INTERRUPTION_QUEUE')
  delete deployment.env.INTERRUPTION_QUEUE
  assert.equal(interruptionQueueOf(release, deployment, scope), null)
  assert.equal(interruptionQueueOf(null, deployment, scope), null)
})
