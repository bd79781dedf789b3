// The files the AWS SDK reads (config, credentials, web identity token) are checked before any client
// exists: a FIFO or a device there is one line at once, not a run that hangs in the SDK's read.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { checkAwsConfigFiles } from '../../../src/context/aws.js'
import { EnvironmentError } from '../../../src/errors.js'

const home = mkdtempSync(join(tmpdir(), 'karpctl-aws-files-'))
after(() => rmSync(home, { recursive: true, force: true }))
const fifo = join(home, 'fifo')
execFileSync('mkfifo', [fifo])

function refusal(env: NodeJS.ProcessEnv): EnvironmentError {
  try {
    checkAwsConfigFiles(env)
  } catch (err) {
    assert.ok(err instanceof EnvironmentError, String(err))
    assert.equal(err.code, 'BAD_AWS_CONFIG')
    return err
  }
  assert.fail('accepted')
}

test('regular files, and files that do not exist, pass (the SDK decides what absence means)', () => {
  checkAwsConfigFiles({ HOME: join(home, 'nobody') })
  writeFileSync(join(home, 'config'), '[default]\nregion = us-west-2\n')
  checkAwsConfigFiles({ HOME: home, AWS_CONFIG_FILE: join(home, 'config') })
})

test('a FIFO or a device named by AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE or AWS_WEB_IDENTITY_TOKEN_FILE is refused', () => {
  assert.equal(
    refusal({ HOME: home, AWS_CONFIG_FILE: fifo }).message,
    `the AWS config file "${fifo}" is a FIFO, not a regular file: point AWS_CONFIG_FILE at the AWS config file, or unset it`,
  )
  assert.match(
    refusal({ HOME: home, AWS_SHARED_CREDENTIALS_FILE: '/dev/zero' }).message,
    /^the AWS credentials file "\/dev\/zero" is a device, not a regular file: point AWS_SHARED_CREDENTIALS_FILE/,
  )
  assert.match(
    refusal({ HOME: home, AWS_WEB_IDENTITY_TOKEN_FILE: fifo }).message,
    /^the web identity token file ".*fifo" is a FIFO/,
  )
})

test('the default ~/.aws/credentials is checked too', () => {
  const other = join(home, 'h2')
  mkdirSync(join(other, '.aws'), { recursive: true })
  execFileSync('mkfifo', [join(other, '.aws', 'credentials')])
  assert.match(
    refusal({ HOME: other }).message,
    /^the AWS credentials file ".*\.aws\/credentials" is a FIFO, not a regular file: replace it with the AWS credentials file$/,
  )
})
