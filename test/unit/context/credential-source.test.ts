// Which source a profile's credentials come from, named for the line a bound that fired prints.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { credentialSource, iniSection, profileSections } from '../../../src/context/credential-source.js'

const CONFIG = `
# a comment
[default]
region = us-east-1

[profile hangs]
credential_process = /opt/bin/creds --password hunter2 --user me
region = eu-west-1

[profile sso]
sso_session = corp
sso_account_id = 123456789012

[sso-session corp]
sso_start_url = https://corp.awsapps.com/start

[profile web]
web_identity_token_file = /var/run/token
role_arn = arn:aws:iam::123456789012:role/web

[profile chained]
role_arn = arn:aws:iam::123456789012:role/admin
source_profile = hangs

[profile loop]
role_arn = arn:aws:iam::123456789012:role/loop
source_profile = loop

[profile onec2]
role_arn = arn:aws:iam::123456789012:role/x
credential_source = Ec2InstanceMetadata

[profile nested]
s3 =
  credential_process = not-this
region = us-west-2
`
const CREDENTIALS = `[static]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = x\n`
const read = (name: string) => profileSections(name, CONFIG, CREDENTIALS)
const source = (profile: string | undefined, env: NodeJS.ProcessEnv = {}) =>
  credentialSource(profile, read, env)

test('iniSection: keys of the named section only, comments and indented sub-keys skipped, later keys win', () => {
  assert.deepEqual(
    iniSection('[a]\nk = 1\n; c = 2\n[b]\nk = 3\n[a]\nk = 4\n', (h) => h === 'a'),
    { k: '4' },
  )
  assert.equal(
    iniSection('[a]\nk=1\n', (h) => h === 'b'),
    undefined,
  )
  assert.deepEqual(profileSections('nested', CONFIG, '').config, { s3: '', region: 'us-west-2' })
  // `[hangs]` in config is not a profile; `[profile hangs]` in credentials is not one either.
  assert.equal(profileSections('x', '[x]\nk=1\n', '[profile x]\nk=2\n').config, undefined)
  assert.equal(profileSections('x', '[x]\nk=1\n', '[profile x]\nk=2\n').credentials, undefined)
  assert.deepEqual(profileSections('default', '[default]\nregion=a\n', '').config, { region: 'a' })
})

test('a credential_process is named by its command, redacted, and given back to be stopped', () => {
  const s = source('hangs')
  assert.match(s.what, /^its credential_process "\/opt\/bin\/creds --password \[REDACTED\] --user me"$/)
  assert.doesNotMatch(s.what, /hunter2/)
  assert.equal(s.command, '/opt/bin/creds --password hunter2 --user me')
})

test('SSO, web identity, an assumed role and its source profile, credential_source', () => {
  assert.match(source('sso').what, /IAM Identity Center \(SSO session "corp"; `aws sso login`/)
  assert.match(source('web').what, /^web identity \(token file "\/var\/run\/token"\)$/)
  const chained = source('chained')
  assert.match(
    chained.what,
    /^assuming "arn:aws:iam::123456789012:role\/admin", with profile "hangs"'s its credential_process/,
  )
  assert.equal(chained.command, '/opt/bin/creds --password hunter2 --user me')
  assert.match(source('onec2').what, /its credential_source Ec2InstanceMetadata/)
  // A profile that is its own source ends, and says only the role.
  assert.equal(source('loop').what, 'assuming "arn:aws:iam::123456789012:role/loop"')
  assert.equal(source('static').what, 'its static keys')
})

test('without a profile of its own: environment keys, web identity, the container endpoint, then IMDS', () => {
  assert.equal(source(undefined, { AWS_ACCESS_KEY_ID: 'AKIA' }).what, 'the environment (AWS_ACCESS_KEY_ID)')
  assert.match(
    source(undefined, { AWS_WEB_IDENTITY_TOKEN_FILE: '/t' }).what,
    /AWS_WEB_IDENTITY_TOKEN_FILE "\/t"/,
  )
  assert.match(
    source('none', { AWS_CONTAINER_CREDENTIALS_FULL_URI: 'http://x' }).what,
    /container credentials/,
  )
  assert.match(source(undefined).what, /instance metadata service \(IMDS\)/)
  // AWS_PROFILE is the profile when no flag names one; the default profile here has no source.
  assert.match(source(undefined, { AWS_PROFILE: 'hangs' }).what, /credential_process/)
  assert.match(source('default').what, /IMDS/)
})
