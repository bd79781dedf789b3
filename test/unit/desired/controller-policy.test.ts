import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { parse } from 'yaml'
import { controllerPolicyDocuments, INTERRUPTION_RULES } from '../../../src/desired/controller-policy.js'
import { fixturePath } from '../../helpers/fixtures.js'

// CloudFormation's short-form tags (!Sub, !GetAtt, !Ref) become plain strings for this comparison.
const customTags = ['Sub', 'GetAtt', 'Ref'].map((t) => ({ tag: `!${t}`, resolve: (s: string) => s }))
const template = parse(readFileSync(fixturePath('v1.14.1/cloudformation.yaml'), 'utf8'), { customTags }) as {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>
}

const params = {
  partition: 'aws',
  region: 'us-west-2',
  accountId: '123456789012',
  clusterName: 'demo',
  nodeRoleArns: ['arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'],
  queueArn: 'arn:aws:sqs:us-west-2:123456789012:demo',
}

function substitute(text: string): string {
  return text
    .replaceAll('${AWS::Partition}', params.partition)
    .replaceAll('${AWS::Region}', params.region)
    .replaceAll('${AWS::AccountId}', params.accountId)
    .replaceAll('${ClusterName}', params.clusterName)
    .replaceAll('${KarpenterNodeRole.Arn}', params.nodeRoleArns[0]!)
    .replaceAll('${KarpenterInterruptionQueue.Arn}', params.queueArn)
}

test('controller policies equal the reference CloudFormation template, statement by statement', () => {
  const ours = controllerPolicyDocuments(params)
  const managed = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::IAM::ManagedPolicy')
  assert.equal(ours.length, managed.length)
  for (const [key, resource] of managed) {
    const mine = ours.find((p) => p.key === key)
    assert.ok(mine, `missing ${key}`)
    assert.equal(mine.name, substitute(resource.Properties.ManagedPolicyName as string))
    assert.deepEqual(mine.document, JSON.parse(substitute(resource.Properties.PolicyDocument as string)))
  }
})

test('interruption rules match the template rules', () => {
  const rules = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Events::Rule')
  assert.equal(rules.length, INTERRUPTION_RULES.length)
  for (const [key, r] of rules) {
    const pattern = r.Properties.EventPattern as { source: string[]; 'detail-type': string[] }
    const mine = INTERRUPTION_RULES.find((x) => x.key === key)
    assert.ok(mine, key)
    assert.deepEqual([mine.source], pattern.source)
    assert.deepEqual([mine.detailType], pattern['detail-type'])
  }
})
