// The queue ARN the interruption checks build for a queue name (issue 12, item 8: mutation testing):
// the partition, region and account of the facts, and a placeholder when the account is not known.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { queueArnFor } from '../../../../src/checks/lib/interruption.js'
import { healthyFacts } from '../../../helpers/facts.js'

test('queueArnFor: the account of the facts, or <account-id> when it was not read', () => {
  assert.equal(queueArnFor(healthyFacts(), 'q'), 'arn:aws:sqs:us-west-2:123456789012:q')
  assert.equal(
    queueArnFor(
      healthyFacts((f) => delete f.meta.accountId),
      'q',
    ),
    'arn:aws:sqs:us-west-2:<account-id>:q',
  )
})
