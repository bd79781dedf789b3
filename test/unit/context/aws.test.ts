// AWS access without the network: error classification, pagination, memoization, and credential
// errors that end the run, with a fake SDK client put where Aws keeps its lazily loaded clients.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  Aws,
  checkEndpoints,
  endpointOf,
  isNotFound,
  MAX_PAGES,
  toReadFailure,
  type AwsOptions,
  type AwsService,
} from '../../../src/context/aws.js'
import { CallLog, Limiter, Memo } from '../../../src/context/limiter.js'
import { EnvironmentError } from '../../../src/errors.js'

const sdkError = (name: string, status?: number, message = `${name} happened`) =>
  Object.assign(new Error(message), { name, ...(status ? { $metadata: { httpStatusCode: status } } : {}) })

test('toReadFailure: AccessDenied, UnauthorizedOperation and any 403 are denied', () => {
  assert.deepEqual(toReadFailure(sdkError('AccessDenied', 403, 'User: x is not authorized'), 'iam:GetRole'), {
    code: 'AccessDenied',
    kind: 'denied',
    message: 'User: x is not authorized',
    read: 'iam:GetRole',
  })
  assert.equal(toReadFailure(sdkError('AccessDeniedException', 400), 'r').kind, 'denied')
  assert.equal(toReadFailure(sdkError('UnauthorizedOperation'), 'r').kind, 'denied')
  assert.equal(toReadFailure(sdkError('SomethingElse', 403), 'r').kind, 'denied')
  // A plain object in the old SDK shape (Code) is classified the same way.
  assert.deepEqual(toReadFailure({ Code: 'AccessDenied', message: 'no' }, 'r'), {
    code: 'AccessDenied',
    kind: 'denied',
    message: 'no',
    read: 'r',
  })
})

test('toReadFailure: Throttling and any 429 are throttled', () => {
  assert.equal(toReadFailure(sdkError('Throttling', 400), 'r').kind, 'throttled')
  assert.equal(toReadFailure(sdkError('ThrottlingException'), 'r').kind, 'throttled')
  assert.equal(toReadFailure(sdkError('RequestLimitExceeded'), 'r').kind, 'throttled')
  assert.equal(toReadFailure(sdkError('SomethingElse', 429), 'r').kind, 'throttled')
})

test('toReadFailure: a 404 without a NotFound code, a 501 and NotImplemented are unsupported', () => {
  assert.deepEqual(toReadFailure(sdkError('UnknownError', 404, 'Not Found'), 'eks:ListAccessEntries'), {
    code: 'UnknownError',
    kind: 'unsupported',
    message: 'Not Found',
    read: 'eks:ListAccessEntries',
  })
  assert.equal(toReadFailure(sdkError('UnknownError', 501), 'r').kind, 'unsupported')
  assert.equal(toReadFailure(sdkError('NotImplemented', 400), 'r').kind, 'unsupported')
  // A real not-found 404 is an error of the read, not a missing operation.
  assert.equal(toReadFailure(sdkError('NoSuchEntity', 404), 'r').kind, 'error')
  assert.equal(toReadFailure(sdkError('ResourceNotFoundException', 404), 'r').kind, 'error')
})

test('toReadFailure: ResourceNotFoundException is not a network error (ENOTFOUND is matched case-sensitively)', () => {
  assert.deepEqual(toReadFailure(sdkError('ResourceNotFoundException', 400, 'Rule not found'), 'events:r'), {
    code: 'ResourceNotFoundException',
    kind: 'error',
    message: 'Rule not found',
    read: 'events:r',
  })
  assert.equal(toReadFailure(sdkError('ResourceNotFoundException'), 'r').kind, 'error')
})

test('toReadFailure: an unparseable (non-AWS) error document is unsupported, without the parser noise', () => {
  const err = sdkError('Error', 500, 'XML parse error: unexpected token at line 1\n<html>Internal</html>')
  assert.deepEqual(toReadFailure(err, 'iam:SimulatePrincipalPolicy'), {
    code: 'HTTP500',
    kind: 'unsupported',
    message:
      'the endpoint answered HTTP 500 without an AWS error: this endpoint does not offer the operation',
    read: 'iam:SimulatePrincipalPolicy',
  })
  const noStatus = toReadFailure(sdkError('SyntaxError', undefined, 'Unexpected token < in JSON'), 'r')
  assert.equal(noStatus.kind, 'unsupported')
  assert.equal(noStatus.code, 'SyntaxError')
  assert.equal(
    noStatus.message,
    'the endpoint answered without an AWS error: this endpoint does not offer the operation',
  )
})

test('toReadFailure: connection errors are network', () => {
  assert.deepEqual(
    toReadFailure({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:4566' }, 'r'),
    {
      code: 'ECONNREFUSED',
      kind: 'network',
      message: 'connect ECONNREFUSED 127.0.0.1:4566',
      read: 'r',
    },
  )
  // As Node throws it: an Error whose message carries the code.
  const node = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566'), { code: 'ECONNREFUSED' })
  assert.equal(toReadFailure(node, 'r').kind, 'network')
  assert.equal(toReadFailure(new Error('getaddrinfo ENOTFOUND sts.example'), 'r').kind, 'network')
  assert.equal(toReadFailure(sdkError('TimeoutError', undefined, 'socket timed out'), 'r').kind, 'network')
})

test('toReadFailure: anything else is error, with a one-line message of at most 300 characters', () => {
  const f = toReadFailure(sdkError('ValidationException', 400, `${'x'.repeat(400)}\nsecond line`), 'r')
  assert.equal(f.kind, 'error')
  assert.equal(f.code, 'ValidationException')
  assert.equal(f.message, 'x'.repeat(300))
  assert.deepEqual(toReadFailure('a string', 'r'), {
    code: 'Error',
    kind: 'error',
    message: 'a string',
    read: 'r',
  })
})

test('isNotFound recognises the not-found codes of IAM, EKS and SQS only', () => {
  for (const name of [
    'NoSuchEntity',
    'NoSuchEntityException',
    'ResourceNotFoundException',
    'AWS.SimpleQueueService.NonExistentQueue',
    'QueueDoesNotExist',
    'NotFoundException',
  ])
    assert.equal(isNotFound(sdkError(name)), true, name)
  assert.equal(isNotFound({ Code: 'NoSuchEntity' }), true)
  for (const name of ['AccessDenied', 'ValidationException', 'Error', 'Throttling'])
    assert.equal(isNotFound(sdkError(name)), false, name)
  assert.equal(isNotFound({}), false)
})

// ---- Aws with a fake client ----

interface Sent {
  command: string
  input: object
}

/** A fake SDK module: `<Op>Command` classes that keep their input, as the real ones do. */
function fakeModule(...ops: string[]): Record<string, unknown> {
  const mod: Record<string, unknown> = {}
  for (const op of ops) {
    mod[`${op}Command`] = class {
      readonly op = op
      constructor(readonly input: object) {}
    }
  }
  return mod
}

function fakeAws(
  service: AwsService,
  mod: Record<string, unknown>,
  send: (command: { op: string; input: object }) => Promise<unknown>,
  options: AwsOptions = { region: 'us-west-2' },
) {
  const log = new CallLog()
  const aws = new Aws(options, new Limiter(4), new Memo(), log)
  const sent: Sent[] = []
  let destroyed = 0
  const client = {
    send: (command: unknown) => {
      const c = command as { op: string; input: object }
      sent.push({ command: c.op, input: c.input })
      return send(c)
    },
    destroy: () => {
      destroyed++
    },
  }
  const internals = aws as unknown as { clients: Map<AwsService, Promise<unknown>> }
  assert.ok(internals.clients instanceof Map, 'Aws keeps its clients in a Map named `clients`')
  internals.clients.set(service, Promise.resolve({ mod, client }))
  return { aws, log, sent, destroyed: () => destroyed }
}

test('Aws.call sends the command with its input and memoizes by operation and input', async () => {
  let n = 0
  const { aws, log, sent } = fakeAws('iam', fakeModule('GetRole'), async ({ input }) => ({ n: ++n, input }))

  const a1 = await aws.call<{ n: number }>('iam', 'GetRole', { RoleName: 'a' })
  const a2 = await aws.call<{ n: number }>('iam', 'GetRole', { RoleName: 'a' })
  const b = await aws.call<{ n: number }>('iam', 'GetRole', { RoleName: 'b' })
  assert.equal(a1, a2)
  assert.deepEqual(a1, { n: 1, input: { RoleName: 'a' } })
  assert.deepEqual(b, { n: 2, input: { RoleName: 'b' } })
  assert.deepEqual(sent, [
    { command: 'GetRole', input: { RoleName: 'a' } },
    { command: 'GetRole', input: { RoleName: 'b' } },
  ])
  assert.deepEqual(log.calls, ['iam:GetRole:{"RoleName":"a"}', 'iam:GetRole:{"RoleName":"b"}'])
  assert.deepEqual(log.duplicates(), [])
})

test('Aws.call shares one in-flight call between concurrent callers', async () => {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const { aws, sent } = fakeAws('eks', fakeModule('DescribeCluster'), async () => {
    await gate
    return { cluster: { name: 'demo' } }
  })
  const p1 = aws.call('eks', 'DescribeCluster', { name: 'demo' })
  const p2 = aws.call('eks', 'DescribeCluster', { name: 'demo' })
  release()
  assert.deepEqual(await Promise.all([p1, p2]), [
    { cluster: { name: 'demo' } },
    { cluster: { name: 'demo' } },
  ])
  assert.equal(sent.length, 1)
})

test('Aws.call passes an ordinary AWS error through unchanged', async () => {
  const denied = sdkError('AccessDenied', 403)
  const { aws } = fakeAws('iam', fakeModule('GetRole'), async () => {
    throw denied
  })
  await assert.rejects(aws.call('iam', 'GetRole', { RoleName: 'a' }), (err) => err === denied)
})

const credentialCases: [string, Error, string, RegExp][] = [
  [
    'CredentialsProviderError',
    sdkError('CredentialsProviderError', undefined, 'Could not load credentials from any providers'),
    'NO_CREDENTIALS',
    /^no AWS credentials found: run `aws configure`/,
  ],
  [
    'a "Could not load credentials" message',
    new Error('Could not load credentials from any providers'),
    'NO_CREDENTIALS',
    /^no AWS credentials found/,
  ],
  [
    'ExpiredToken',
    sdkError('ExpiredToken', 400),
    'EXPIRED_CREDENTIALS',
    /^AWS credentials have expired: refresh them/,
  ],
  ['ExpiredTokenException', sdkError('ExpiredTokenException', 403), 'EXPIRED_CREDENTIALS', /have expired/],
  [
    'InvalidClientTokenId',
    sdkError('InvalidClientTokenId', 403),
    'INVALID_CREDENTIALS',
    /^AWS rejected the credentials \(InvalidClientTokenId\)/,
  ],
  ['SignatureDoesNotMatch', sdkError('SignatureDoesNotMatch', 403), 'INVALID_CREDENTIALS', /rejected/],
]

for (const [what, thrown, code, message] of credentialCases) {
  test(`Aws.call turns ${what} into EnvironmentError ${code}`, async () => {
    const { aws } = fakeAws('sts', fakeModule('GetCallerIdentity'), async () => {
      throw thrown
    })
    await assert.rejects(aws.call('sts', 'GetCallerIdentity'), (err) => {
      assert.ok(err instanceof EnvironmentError, `got ${String(err)}`)
      assert.equal(err.code, code)
      assert.match(err.message, message)
      assert.ok(!err.message.includes('\n'))
      return true
    })
  })
}

test('credential errors name the profile in use', async () => {
  const { aws } = fakeAws(
    'sts',
    fakeModule('GetCallerIdentity'),
    async () => {
      throw sdkError('ExpiredToken', 400)
    },
    { region: 'us-west-2', profile: 'team-admin' },
  )
  await assert.rejects(aws.call('sts', 'GetCallerIdentity'), {
    code: 'EXPIRED_CREDENTIALS',
    message:
      'AWS credentials (profile team-admin) have expired: refresh them (e.g. `aws sso login`) and run again',
  })
})

test('Aws.all follows the token through every page and concatenates the items', async () => {
  const pages: Record<string, { Items?: string[]; Next?: string }> = {
    '': { Items: ['a', 'b'], Next: 't1' },
    t1: { Items: [], Next: 't2' },
    t2: { Items: ['c'] },
  }
  const { aws, sent } = fakeAws('iam', fakeModule('ListRoles'), async ({ input }) => {
    const marker = (input as { Marker?: string }).Marker ?? ''
    const page = pages[marker]
    assert.ok(page, `unexpected marker ${marker}`)
    return page
  })
  const page = (out: { Items?: string[]; Next?: string }) => ({ items: out.Items, next: out.Next })

  const items = await aws.all('iam', 'ListRoles', { PathPrefix: '/' }, 'Marker', page)
  assert.deepEqual(items, ['a', 'b', 'c'])
  assert.deepEqual(
    sent.map((s) => s.input),
    [{ PathPrefix: '/' }, { PathPrefix: '/', Marker: 't1' }, { PathPrefix: '/', Marker: 't2' }],
  )

  // Every page is a memoized call: listing again reaches no API.
  assert.deepEqual(await aws.all('iam', 'ListRoles', { PathPrefix: '/' }, 'Marker', page), ['a', 'b', 'c'])
  assert.equal(sent.length, 3)
})

test('Aws.all with `call` stubbed: one call per page, a page without items adds none', async () => {
  const aws = new Aws({ region: 'us-west-2' }, new Limiter(1), new Memo(), new CallLog())
  const pages = [{ list: [1, 2], token: 'x' }, { token: 'y' }, { list: [3] }]
  const inputs: object[] = []
  let i = 0
  aws.call = (async (_service: AwsService, _op: string, input: object = {}) => {
    inputs.push(input)
    return pages[i++]
  }) as Aws['call']
  const out = await aws.all<{ list?: number[]; token?: string }, number>(
    'ec2',
    'DescribeSubnets',
    { Filters: [] },
    'NextToken',
    (o) => ({ items: o.list, next: o.token }),
  )
  assert.deepEqual(out, [1, 2, 3])
  assert.deepEqual(inputs, [
    { Filters: [] },
    { Filters: [], NextToken: 'x' },
    { Filters: [], NextToken: 'y' },
  ])
})

/** An Aws whose `call` answers page `n` (0-based) with `answer(n)`, counting the calls. */
function pagedAws(answer: (n: number) => unknown) {
  const aws = new Aws(
    { region: 'us-west-2', endpoint: 'http://127.0.0.1:1' },
    new Limiter(1),
    new Memo(),
    new CallLog(),
  )
  let calls = 0
  aws.call = (async () => answer(calls++)) as Aws['call']
  const list = () =>
    aws.all<{ list?: unknown; token?: unknown }, number>(
      'ec2',
      'DescribeInstanceTypes',
      {},
      'NextToken',
      (o) => ({
        items: o.list as number[],
        next: o.token as string,
      }),
    )
  return { list, calls: () => calls }
}

test('Aws.all stops on a NextToken the server gave before, naming the API (issue 36: why paginated forever)', async () => {
  // The same token every time, and a cycle of two: both end at the first repeat.
  const same = pagedAws(() => ({ list: [1], token: 'again' }))
  await assert.rejects(same.list(), (err: Error) => {
    assert.equal(err.name, 'BadAnswer')
    assert.match(
      err.message,
      /^AWS EC2 at http:\/\/127\.0\.0\.1:1 answered DescribeInstanceTypes \(page 2\) with a NextToken it had given before/,
    )
    return true
  })
  assert.equal(same.calls(), 2)
  const cycle = pagedAws((n) => ({ list: [n], token: n % 2 ? 'b' : 'a' }))
  await assert.rejects(cycle.list(), /page 3\) with a NextToken it had given before/)
  // As a read failure: code BadAnswer, the message naming the operation.
  const failure = await cycle.list().catch((err: unknown) => toReadFailure(err, 'ec2:DescribeInstanceTypes'))
  assert.equal((failure as { code: string }).code, 'BadAnswer')
})

test('Aws.all bounds the pages of a list that never ends, and refuses items or a token of the wrong type', async () => {
  const endless = pagedAws((n) => ({ list: [n], token: `t${n}` }))
  await assert.rejects(endless.list(), /with more than 1000 pages: the list was cut off there/)
  assert.equal(endless.calls(), MAX_PAGES)
  await assert.rejects(
    pagedAws(() => ({ list: { a: 1 } })).list(),
    /\(page 1\) with its items as an object, not a list$/,
  )
  await assert.rejects(
    pagedAws(() => ({ list: [1], token: 5 })).list(),
    /with NextToken as the number 5, not text$/,
  )
})

test('Aws.all gathers a page of 150,000 items without a spread (no call-stack overflow)', async () => {
  const big = Array.from({ length: 150_000 }, (_, i) => i)
  const items = await pagedAws(() => ({ list: big })).list()
  assert.equal(items.length, 150_000)
})

test('Aws.destroy destroys every client it created', async () => {
  const { aws, destroyed } = fakeAws('sts', fakeModule('GetCallerIdentity'), async () => ({}))
  aws.destroy()
  await Promise.resolve()
  await Promise.resolve()
  assert.equal(destroyed(), 1)
})

// ---- issue 10: an endpoint that accepts the connection and never answers ----

async function silentServer(t: { after: (fn: () => void) => void }): Promise<string> {
  const net = await import('node:net')
  const sockets: import('node:net').Socket[] = []
  const server = net.createServer((s) => sockets.push(s)).listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  t.after(() => {
    for (const s of sockets) s.destroy()
    server.close()
  })
  return `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`
}

const credentials = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'x'.repeat(40) }

/** Static credentials in the environment for one test, as they were afterwards. */
function withCredentials(t: { after: (fn: () => void) => void }): void {
  const saved = { ...process.env }
  Object.assign(process.env, credentials)
  t.after(() => {
    for (const k of Object.keys(credentials)) {
      if (saved[k] === undefined) delete process.env[k]
      else process.env[k] = saved[k]
    }
  })
}

test('a silent endpoint: the real SDK gives up after its request timeout, one EnvironmentError naming the service and the endpoint', async (t) => {
  const endpoint = await silentServer(t)
  withCredentials(t)
  const aws = new Aws(
    { region: 'us-west-2', endpoint, maxAttempts: 2, requestTimeoutMs: 300 },
    new Limiter(4),
    new Memo(),
    new CallLog(),
  )
  t.after(() => aws.destroy())
  const started = Date.now()
  const err = await aws.call('sts', 'GetCallerIdentity').then(
    () => assert.fail('a silent endpoint answered'),
    (e: unknown) => e,
  )
  assert.ok(Date.now() - started < 5_000, `gave up after ${Date.now() - started} ms`)
  assert.ok(err instanceof EnvironmentError, String(err))
  assert.equal(err.code, 'AWS_TIMEOUT')
  assert.equal(
    err.message,
    `AWS STS at ${endpoint} did not answer GetCallerIdentity within 0.3 s: check the network, --region and AWS_ENDPOINT_URL`,
  )
  // A write that timed out may have happened: it stays the SDK's error, for the executor to judge.
  const write = await aws.write('sts', 'GetCallerIdentity').then(
    () => assert.fail('a silent endpoint answered'),
    (e: unknown) => e,
  )
  assert.ok(!(write instanceof EnvironmentError), String(write))
  assert.equal(toReadFailure(write, 'w').kind, 'network')
})

test('every client is made with a request, connection and socket timeout (the SDK has none by default)', async () => {
  const aws = new Aws(
    { region: 'us-west-2', requestTimeoutMs: 7_000 },
    new Limiter(1),
    new Memo(),
    new CallLog(),
  )
  const internals = aws as unknown as {
    load(s: AwsService): Promise<{ client: { config: { requestHandler: unknown } } }>
  }
  const { client } = await internals.load('eks')
  const handler = client.config.requestHandler as { configProvider: Promise<Record<string, unknown>> }
  const config = await handler.configProvider
  assert.equal(config.requestTimeout, 7_000)
  assert.equal(config.connectionTimeout, 5_000)
  assert.equal(config.socketTimeout, 7_000)
  assert.equal(config.throwOnRequestTimeout, true)
  aws.destroy()
})

test('endpointOf: explicit, AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, else AWS; never with userinfo', () => {
  const o = { region: 'eu-west-1' }
  assert.equal(endpointOf('sqs', o, {}), 'https://sqs.eu-west-1.amazonaws.com')
  assert.equal(endpointOf('eventbridge', o, {}), 'https://events.eu-west-1.amazonaws.com')
  assert.equal(endpointOf('iam', o, {}), 'https://iam.amazonaws.com')
  assert.equal(
    endpointOf('eks', o, { AWS_ENDPOINT_URL: 'http://u:p@localhost:4566' }),
    'http://localhost:4566',
  )
  assert.equal(
    endpointOf('eks', o, { AWS_ENDPOINT_URL: 'http://a', AWS_ENDPOINT_URL_EKS: 'http://b' }),
    'http://b',
  )
  assert.equal(
    endpointOf('eks', { ...o, endpoint: 'http://c' }, { AWS_ENDPOINT_URL: 'http://a' }),
    'http://c',
  )
})

test('clients are built one at a time: the next once the one before has its first request on the way', async (t) => {
  const http = await import('node:http')
  withCredentials(t)
  const at: Record<string, number> = {}
  // A request is on its way when the SDK's handler gives it to the connection pool.
  const proto = http.Agent.prototype as unknown as {
    addRequest: (req: { path: string }, ...rest: unknown[]) => void
  }
  const addRequest = proto.addRequest
  t.after(() => (proto.addRequest = addRequest))
  proto.addRequest = function (this: unknown, req, ...rest) {
    at[req.path.startsWith('/clusters/') ? 'eks request' : 'sts request'] ??= performance.now()
    return addRequest.call(this, req, ...rest)
  }
  const server = http.createServer((req, res) => {
    const eks = req.url?.startsWith('/clusters/')
    res.setHeader('content-type', 'application/json')
    res.end(eks ? '{"cluster":{"name":"demo"}}' : '{}')
  })
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  t.after(() => server.close())
  const endpoint = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`
  const aws = new Aws({ region: 'us-west-2', endpoint }, new Limiter(4), new Memo(), new CallLog())
  t.after(() => aws.destroy())
  // Each client's build, timed as it completes.
  class Timed extends Map<AwsService, Promise<unknown>> {
    override set(service: AwsService, entry: Promise<unknown>) {
      void entry.then(() => (at[`${service} built`] = performance.now())).catch(() => {})
      return super.set(service, entry)
    }
  }
  Object.assign(aws, { clients: new Timed() })
  const cluster = aws.call('eks', 'DescribeCluster', { name: 'demo' })
  const who = aws.call('sts', 'GetCallerIdentity').catch(() => 'answered')
  await Promise.all([cluster, who])
  assert.deepEqual(
    Object.entries(at)
      .sort((a, b) => a[1] - b[1])
      .map(([what]) => what),
    ['eks built', 'eks request', 'sts built', 'sts request'],
  )
})

test('a client whose first call fails before any request goes out does not hold up the next', async () => {
  // A profile that does not exist: the first call fails resolving credentials, before its request.
  const aws = new Aws(
    { region: 'us-west-2', profile: 'karpctl-no-such-profile' },
    new Limiter(4),
    new Memo(),
    new CallLog(),
  )
  const settled = await Promise.allSettled([
    aws.call('eks', 'DescribeCluster', { name: 'demo' }),
    aws.call('sts', 'GetCallerIdentity'),
    aws.call('iam', 'ListRoles'),
  ])
  assert.deepEqual(
    settled.map((s) => s.status),
    ['rejected', 'rejected', 'rejected'],
  )
  for (const s of settled) assert.ok((s as PromiseRejectedResult).reason instanceof EnvironmentError)
  aws.destroy()
})

test('an endpoint that sends headers and then trickles the body: a read ends within its deadline, one line', async (t) => {
  const net = await import('node:net')
  const sockets: import('node:net').Socket[] = []
  // A byte every 50 ms: the SDK's per-attempt timeouts (idle socket) never fire.
  const server = net
    .createServer((s) => {
      sockets.push(s)
      s.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n')
      const timer = setInterval(() => s.write(' '), 50)
      s.on('close', () => clearInterval(timer))
      s.on('error', () => clearInterval(timer))
    })
    .listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  t.after(() => {
    for (const s of sockets) s.destroy()
    server.close()
  })
  const endpoint = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`
  withCredentials(t)
  const aws = new Aws(
    { region: 'us-west-2', endpoint, maxAttempts: 1, requestTimeoutMs: 300 },
    new Limiter(4),
    new Memo(),
    new CallLog(),
  )
  t.after(() => aws.destroy())
  const started = Date.now()
  const err = await aws.call('eks', 'DescribeCluster', { name: 'demo' }).then(
    () => assert.fail('a trickled body was taken as an answer'),
    (e: unknown) => e,
  )
  assert.ok(Date.now() - started < 5_000, `gave up after ${Date.now() - started} ms`)
  assert.ok(err instanceof EnvironmentError, String(err))
  assert.equal(err.code, 'AWS_TIMEOUT')
  assert.match(err.message, /^AWS EKS at http:\/\/127\.0\.0\.1:\d+ did not answer DescribeCluster within/)
})

test('describeAwsAnswer: endpoint, status and what came, sanitised; nothing when nothing answered', async () => {
  const { describeAwsAnswer } = await import('../../../src/context/aws.js')
  const opts: AwsOptions = { region: 'us-east-1' }
  const answer = (name: string, status: number, message: string, headers: Record<string, string> = {}) =>
    Object.assign(new Error(message), {
      name,
      $metadata: { httpStatusCode: status },
      $response: { statusCode: status, headers },
    })
  assert.deepEqual(
    describeAwsAnswer(
      answer('InternalError', 500, 'We encountered an internal error'),
      'ec2',
      'DescribeSubnets',
      opts,
      {},
    ),
    {
      line: "AWS EC2 at https://ec2.us-east-1.amazonaws.com answered HTTP 500 to DescribeSubnets: We encountered an internal error (InternalError) — AWS's side; retry later",
      code: 'AWS_SERVER_ERROR',
    },
  )
  assert.equal(
    describeAwsAnswer(
      answer('Unknown', 502, 'Unknown', { 'Content-Type': 'text/html; charset=utf-8' }),
      'sts',
      'GetCallerIdentity',
      opts,
      {},
    )?.line,
    'AWS STS at https://sts.us-east-1.amazonaws.com answered HTTP 502 to GetCallerIdentity with an HTML page (a proxy?): retry later, or check HTTPS_PROXY',
  )
  assert.match(
    describeAwsAnswer(
      answer('Unknown', 302, 'Unknown', { location: 'https://u:pw@login.example/\u001b[2J' }),
      'iam',
      'GetRole',
      opts,
      {},
    )?.line ?? '',
    /^AWS IAM at https:\/\/iam\.amazonaws\.com answered HTTP 302 to GetRole with a redirect to https:\/\/login\.example\/\\u001b\[2J: AWS does not redirect/,
  )
  const secret = answer(
    'SignatureDoesNotMatch2',
    400,
    `Credential=ASIAIOSFODNN7EXAMPLE/x ${'y'.repeat(500)}\nsecond line`,
  )
  const line = describeAwsAnswer(secret, 'eks', 'DescribeCluster', opts, {})?.line ?? ''
  assert.doesNotMatch(line, /ASIAIOSFODNN7EXAMPLE|second line/)
  assert.ok(line.length < 400, line)
  assert.equal(
    describeAwsAnswer(
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'eks',
      'X',
      opts,
      {},
    ),
    undefined,
  )
})

test('checkEndpoints: only http(s) URLs without user:password@, named by where they were given', () => {
  checkEndpoints(
    { region: 'us-west-2', endpoint: 'http://127.0.0.1:4566' },
    { AWS_ENDPOINT_URL_EKS: 'https://eks.local' },
  )
  assert.throws(
    () => checkEndpoints({ region: 'us-west-2' }, { AWS_ENDPOINT_URL: 'ftp://127.0.0.1:21' }),
    /^Error: AWS_ENDPOINT_URL "ftp:\/\/127\.0\.0\.1:21" is not an http:\/\/ or https:\/\/ URL/,
  )
  assert.throws(
    () => checkEndpoints({ region: 'us-west-2', endpoint: 'http://u:pw@127.0.0.1:1' }, {}),
    (err: Error) =>
      /^--endpoint "http:\/\/127\.0\.0\.1:1" carries a user name or password/.test(err.message) &&
      !/pw/.test(err.message),
  )
  assert.throws(
    () => checkEndpoints({ region: 'us-west-2' }, { AWS_ENDPOINT_URL_STS: 'localhost:4566' }),
    /AWS_ENDPOINT_URL_STS/,
  )
})
