// What parsePolicyDocument accepts and how it refuses the rest, one rule per test (issue 12,
// item 8): the shape of the document and of each statement, the two URL decodings, and the
// preview of the text that every error message carries.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  normalisePolicyDocument,
  parsePolicyDocument,
  PolicyDocumentError,
} from '../../../src/facts/policy-document.js'

/** The message of the PolicyDocumentError that `f` throws. */
function errorOf(f: () => unknown): string {
  try {
    f()
  } catch (err) {
    assert.ok(err instanceof PolicyDocumentError, String(err))
    assert.equal(err.name, 'PolicyDocumentError')
    return err.message
  }
  assert.fail('no error thrown')
}
const parseError = (text: string) => errorOf(() => parsePolicyDocument(text))
const statementError = (statement: unknown) =>
  errorOf(() => normalisePolicyDocument({ Statement: [statement] }))

test('a document that is not a JSON object is refused: null, a string, a list', () => {
  for (const raw of [null, 'text', 5, [{ Effect: 'Allow', Action: '*' }]])
    assert.match(
      errorOf(() => normalisePolicyDocument(raw)),
      /^not an IAM policy document: expected a JSON object$/,
    )
})

test('an already-parsed document carries no text preview; a parsed text does', () => {
  assert.equal(
    errorOf(() => normalisePolicyDocument({})),
    'not an IAM policy document: no "Statement"',
  )
  assert.equal(parseError('{}'), 'not an IAM policy document: no "Statement" (text: "{}")')
})

test('Version and Id are kept when they are strings, dropped otherwise', () => {
  const s = { Effect: 'Allow', Action: '*', Resource: '*' }
  assert.deepEqual(normalisePolicyDocument({ Version: '2012-10-17', Id: 'P', Statement: s }), {
    Version: '2012-10-17',
    Id: 'P',
    Statement: [s],
  })
  assert.deepEqual(normalisePolicyDocument({ Version: 2012, Id: 7, Statement: s }), { Statement: [s] })
})

test('a statement that is not an object is refused: null, a string, a list', () => {
  for (const s of [null, 'Allow', [{ Effect: 'Allow', Action: '*' }]])
    assert.match(statementError(s), /Statement\[0\] is not an object$/)
})

test('NotAction alone is an action', () => {
  const doc = normalisePolicyDocument({ Statement: [{ Effect: 'Deny', NotAction: 'iam:*', Resource: '*' }] })
  assert.equal(doc.Statement[0]!.NotAction, 'iam:*')
})

test('Action, NotAction, Resource and NotResource: a string or a list of strings, nothing else', () => {
  for (const key of ['Action', 'NotAction', 'Resource', 'NotResource']) {
    for (const bad of [5, ['a', 1], { a: 'b' }])
      assert.match(
        statementError({ Effect: 'Allow', Action: '*', [key]: bad }),
        new RegExp(`Statement\\[0\\]\\.${key} must be a string or a list of strings`),
        `${key} = ${JSON.stringify(bad)}`,
      )
  }
  assert.doesNotThrow(() =>
    normalisePolicyDocument({ Statement: [{ Effect: 'Allow', Action: ['a', 'b'], Resource: 'r' }] }),
  )
})

test('a Condition must be an object: null, a string and a list are refused', () => {
  for (const bad of [null, 'x', [{ StringEquals: {} }]])
    assert.match(
      statementError({ Effect: 'Allow', Action: '*', Condition: bad }),
      /Statement\[0\]\.Condition must be an object$/,
    )
  assert.doesNotThrow(() =>
    normalisePolicyDocument({ Statement: [{ Effect: 'Allow', Action: '*', Condition: {} }] }),
  )
})

test('the preview leaves out the whitespace around the text', () => {
  assert.equal(
    parseError('  {"Statement":[5]}\n'),
    'not an IAM policy document: Statement[0] is not an object (text: "{\\"Statement\\":[5]}")',
  )
})

test('text of only whitespace is empty', () => {
  assert.equal(parseError('  \n '), 'not an IAM policy document: the text is empty')
})

test('text without a %XX escape reports the JSON error itself, with the parser message', () => {
  const m = parseError('{%4z')
  assert.doesNotMatch(m, /URL-decoded/)
  assert.match(m, /JSON/)
  assert.match(m, /\(text: "\{%4z"\)$/)
})

test('form encoding: + outside strings forces the second decoding, which keeps + inside strings as spaces', () => {
  const doc = parsePolicyDocument(
    '%7B%22Statement%22:+%5B%7B%22Sid%22:%22a+b%22,%22Effect%22:%22Allow%22,%22Action%22:%22*%22%7D%5D%7D',
  )
  assert.equal(doc.Statement[0]!.Sid, 'a b')
})

test('the preview collapses whitespace and stops after 40 characters', () => {
  assert.match(parseError('not\n\t json'), /\(text: "not json"\)$/)
  const forty = 'x'.repeat(40)
  assert.match(parseError(forty), new RegExp(`\\(text: "${forty}"\\)$`))
  assert.match(parseError(`${forty}yz`), new RegExp(`\\(text: "${forty}…"\\)$`))
})
