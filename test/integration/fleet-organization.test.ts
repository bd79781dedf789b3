// doctor --all-clusters --organization, discovery against HTTP-level mocks: the caller's organization
// lists its accounts (two pages, one account suspended), the role is assumed in every active account
// but the caller's own, and each account's clusters are listed with that account's credentials.
// A caller that may not list the organization is a gap, and its own clusters are still found.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import nock from 'nock'
import { discover, FleetAws } from '../../src/fleet/discover.js'

const REGION = 'us-west-2'
const SELF = '111111111111'
const MEMBER = '222222222222'
const SUSPENDED = '333333333333'
const STS = `https://sts.${REGION}.amazonaws.com`
const ORGS = 'https://organizations.us-east-1.amazonaws.com'
const EKS = `https://eks.${REGION}.amazonaws.com`
const xml = (op: string, body: string) =>
  `<${op}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><${op}Result>${body}</${op}Result><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></${op}Response>`

function hermetic(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-org-'))
  writeFileSync(join(dir, 'config'), '')
  const saved = { ...process.env }
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    AWS_CONFIG_FILE: join(dir, 'config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'config'),
    AWS_EC2_METADATA_DISABLED: 'true',
  })
  delete process.env.AWS_PROFILE
  delete process.env.AWS_SESSION_TOKEN
  nock.disableNetConnect()
  t.after(() => {
    nock.cleanAll()
    nock.enableNetConnect()
    process.env = saved
  })
}

function sts() {
  nock(STS)
    .persist()
    .post(
      '/',
      (b) =>
        String(new URLSearchParams(b).get('Action')) === 'GetCallerIdentity' ||
        b.Action === 'GetCallerIdentity',
    )
    .reply(
      200,
      xml(
        'GetCallerIdentity',
        `<Arn>arn:aws:iam::${SELF}:user/ops</Arn><UserId>AIDA1</UserId><Account>${SELF}</Account>`,
      ),
    )
  nock(STS)
    .post('/', (b) => (b.Action ?? new URLSearchParams(b).get('Action')) === 'AssumeRole')
    .reply(
      200,
      xml(
        'AssumeRole',
        `<Credentials><AccessKeyId>ASIAMEMBER0000000001</AccessKeyId><SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken><Expiration>2030-01-01T00:00:00Z</Expiration></Credentials><AssumedRoleUser><Arn>arn:aws:sts::${MEMBER}:assumed-role/KarpctlDoctor/karpctl</Arn><AssumedRoleId>AROA1:karpctl</AssumedRoleId></AssumedRoleUser>`,
      ),
    )
}

/** ListClusters answers by the access key that signed it: the caller's account or the member's. */
function eks() {
  nock(EKS)
    .persist()
    .get('/clusters')
    .reply(function () {
      const auth = String(this.req.headers.authorization ?? '')
      return [200, { clusters: auth.includes('ASIAMEMBER') ? ['member-prod'] : ['ops'] }]
    })
}

test('--organization: every active account of the organization, the role assumed in each but the caller’s own', async (t) => {
  hermetic(t)
  sts()
  eks()
  const asked: string[] = []
  nock(ORGS)
    .post('/')
    .twice()
    .reply(function (_uri, body) {
      asked.push(String(this.req.headers['x-amz-target']))
      const b = (typeof body === 'string' ? JSON.parse(body) : body) as { NextToken?: string }
      return b.NextToken
        ? [200, { Accounts: [{ Id: SUSPENDED, State: 'SUSPENDED', Status: 'SUSPENDED' }] }]
        : [
            200,
            {
              Accounts: [
                { Id: SELF, State: 'ACTIVE' },
                { Id: MEMBER, Status: 'ACTIVE' },
              ],
              NextToken: 'p2',
            },
          ]
    })
  const fleet = new FleetAws({})
  try {
    const d = await discover(
      { regions: [REGION], profiles: [], roleName: 'KarpctlDoctor', accounts: [], organization: true },
      REGION,
      fleet,
    )
    assert.deepEqual(asked, [
      'AWSOrganizationsV20161128.ListAccounts',
      'AWSOrganizationsV20161128.ListAccounts',
    ])
    assert.deepEqual(d.gaps, [])
    assert.deepEqual(d.principals.map((p) => p.accountId).sort(), [SELF, MEMBER])
    assert.deepEqual(d.clusters.map((c) => c.arn).sort(), [
      `arn:aws:eks:${REGION}:${SELF}:cluster/ops`,
      `arn:aws:eks:${REGION}:${MEMBER}:cluster/member-prod`,
    ])
  } finally {
    fleet.destroy()
  }
})

test('--organization: a caller that may not list the organization is a gap; its own clusters are still found', async (t) => {
  hermetic(t)
  sts()
  eks()
  nock(ORGS).post('/').reply(400, {
    __type: 'AccessDeniedException',
    message: 'You don’t have permissions to access this resource.',
  })
  const fleet = new FleetAws({})
  try {
    const d = await discover(
      { regions: [REGION], profiles: [], roleName: 'KarpctlDoctor', accounts: [], organization: true },
      REGION,
      fleet,
    )
    assert.equal(d.gaps.length, 1)
    assert.match(
      d.gaps[0]!.reason,
      /cannot list the organization's accounts \(AccessDenied.*management account or a delegated administrator/,
    )
    assert.deepEqual(
      d.clusters.map((c) => c.name),
      ['ops'],
    )
  } finally {
    fleet.destroy()
  }
})
