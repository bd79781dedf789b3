// AWS access key ids never leave karpctl in the clear, the temporary ones (`ASIA…`, what SSO, assumed
// roles and instance profiles hand out, so what most runs use) as much as the long-lived `AKIA…`:
// not in a saved snapshot, not in an error message (a failed read, a failed step, the line karpctl
// prints at the end), even when AWS's own message quotes the credential.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import type { Aws } from '../../../src/context/aws.js'
import { KarpctlError } from '../../../src/errors.js'
import { REDACTED, redactText } from '../../../src/redact/redact.js'
import { saveSnapshot } from '../../../src/facts/snapshot.js'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { runPlan } from '../../../src/plan/session.js'
import type { Resource } from '../../../src/plan/types.js'
import { writeError } from '../../../src/report/terminal.js'
import { healthyFacts } from '../../helpers/facts.js'
import { awsError, bareEnv, fakeResource } from '../../helpers/fake-resource.js'

// Shaped like real key ids (20 characters, upper-case letters and digits), not AWS's documented examples.
const TEMPORARY = 'ASIAZ7Q3K5EXAMPLE7XY'
const LONG_LIVED = 'AKIAZ7Q3K5EXAMPLE7XY'
const KEYS = [TEMPORARY, LONG_LIVED]

/** AWS's words when a signature does not match: the credential scope, key id first, quoted. */
const signatureError = (key: string) =>
  awsError(
    'SignatureDoesNotMatch',
    `The request signature we calculated does not match the signature you provided. Credential=${key}/20261202/us-west-2/iam/aws4_request, SignedHeaders=host;x-amz-date`,
    403,
  )

const dir = mkdtempSync(join(tmpdir(), 'karpctl-key-ids-'))
after(() => rmSync(dir, { recursive: true, force: true }))

// toReadFailure (src/context/aws.ts), which failureOf uses for every AWS error, redacts AWS's message:
// buildPlan's PlanError, describeStepError (the ApplyResult, the progress line, runPlan's ApplyError)
// and writeError all quote it.

const leaked = (text: string) => KEYS.filter((k) => text.includes(k))

test('redactText blanks a temporary key id as it blanks a long-lived one, wherever it stands', () => {
  // Kills: the ASIA prefix dropped from the key-id shape.
  for (const key of KEYS)
    for (const text of [
      key,
      `Credential=${key}/20261202/us-west-2/sts/aws4_request`,
      `{"AccessKeyId": "${key}"}`,
      `aws_access_key_id = ${key}`,
      `export AWS_ACCESS_KEY_ID=${key}`,
    ]) {
      const out = redactText(text)
      assert.deepEqual(leaked(out), [], out)
      assert.ok(out.includes(REDACTED), out)
    }
})

test("a saved snapshot holds no key id: not in a read failure's message, not in a Helm value", async () => {
  const facts = healthyFacts((f) => {
    f.sqs.queue = {
      ok: false,
      error: {
        code: 'SignatureDoesNotMatch',
        kind: 'denied',
        message: signatureError(TEMPORARY).message,
        read: 'sqs:GetQueueUrl',
      },
    }
    if (f.kube.release.ok && f.kube.release.value)
      f.kube.release.value.values.extraEnv = {
        AWS_ACCESS_KEY_ID: TEMPORARY,
        NOTE: `rotated ${LONG_LIVED} to ${TEMPORARY}`,
      }
    f.meta.clusterName = 'demo'
  })
  const path = join(dir, 'snapshot.json')
  await saveSnapshot(path, facts)
  const text = readFileSync(path, 'utf8')
  assert.deepEqual(leaked(text), [])
  assert.ok(text.includes(REDACTED))
})

/** What karpctl prints for an error, as text on stderr and as --json on stdout. */
function printed(err: KarpctlError): string {
  const out: string[] = []
  const write = (chunk: string | Uint8Array) => {
    out.push(String(chunk))
    return true
  }
  const [stdout, stderr] = [process.stdout.write, process.stderr.write]
  process.stdout.write = write as typeof process.stdout.write
  process.stderr.write = write as typeof process.stderr.write
  try {
    writeError(err, false)
    writeError(err, true)
  } finally {
    process.stdout.write = stdout
    process.stderr.write = stderr
  }
  return out.join('')
}

test("a read that fails with AWS quoting the key id: the plan's error does not carry it", async () => {
  for (const key of KEYS) {
    const r: Resource = {
      ...fakeResource('g.x'),
      observe: () => Promise.reject(signatureError(key)),
    }
    const err = await buildPlan('t', [r], bareEnv()).then(
      () => assert.fail('the read failed: the plan must fail'),
      (e: unknown) => e,
    )
    assert.ok(err instanceof KarpctlError)
    assert.deepEqual(leaked(err.message), [], err.message)
    assert.deepEqual(leaked(printed(err)), [])
  }
})

test('a step that fails with AWS quoting the key id: the result, the progress line and the final error do not carry it', async () => {
  for (const key of KEYS) {
    const env = bareEnv()
    const plan = await buildPlan(
      't',
      [fakeResource('g.x', [], { apply: () => Promise.reject(signatureError(key)) })],
      env,
    )
    const direct = await applyPlan(plan, env)
    assert.equal(direct.failed.length, 1)
    assert.deepEqual(leaked(JSON.stringify(direct)), [])
    const lines: string[] = []
    const err = await runPlan(
      plan,
      env,
      {
        prompter: null,
        yes: true,
        dryRun: false,
        color: false,
        say: (l) => lines.push(l),
        progress: (l) => lines.push(l),
      },
      { aws: env.aws as Aws, question: () => 'apply?' },
    ).then(
      () => assert.fail('the step failed: the run must fail'),
      (e: unknown) => e,
    )
    assert.ok(err instanceof KarpctlError)
    assert.deepEqual(leaked(lines.join('\n')), [], lines.join('\n'))
    assert.deepEqual(leaked(err.message), [], err.message)
    assert.deepEqual(leaked(printed(err)), [])
  }
})
