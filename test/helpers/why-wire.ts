// What the `why` suites on the wire share: the process environment they run in (a kubeconfig for the
// mocked API, static AWS keys, no endpoint override, no instance metadata), restored after, and the
// answer of the mocked Kubernetes API to a path the suite does not serve.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import nock from 'nock'
import { ec2Answer, HOSTS, KUBE_SERVER, KUBE_TOKEN, kubeconfigYaml, type Answer } from './mock-cluster.js'

/** Sets the environment for an in-process run against the mocked cluster; returns what restores it. */
export function wireEnv(dir: string): () => void {
  writeFileSync(join(dir, 'kubeconfig'), kubeconfigYaml(KUBE_SERVER, KUBE_TOKEN))
  const saved: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries({
    KUBECONFIG: join(dir, 'kubeconfig'),
    AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: undefined,
    AWS_ENDPOINT_URL: undefined,
    AWS_ENDPOINT_URL_EC2: undefined,
    AWS_EC2_METADATA_DISABLED: 'true',
  })) {
    saved[k] = process.env[k]
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  return () => {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
  }
}

/** Everything else doctor's collectors read (the Helm release, webhooks, CRDs…): an empty list, or 404 for one object. */
export function notServed(pathname: string): [number, unknown] {
  return pathname.split('/').length % 2 === 0 && !/\/namespaces\/[^/]+\/[^/]+\/[^/]+$/.test(pathname)
    ? [200, { items: [] }]
    : [404, { kind: 'Status', reason: 'NotFound', message: 'not found' }]
}

/**
 * Serves the mocked Kubernetes API on every method, `answer` deciding; each request is recorded in
 * `seen` as `METHOD path` (a write would show there, and the suites fail on it).
 */
export function serveKube(answer: (path: string) => [number, unknown], seen: string[] = []): string[] {
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
    nock(KUBE_SERVER)
      .persist()
      .intercept(/.*/, method)
      .reply(function (uri) {
        seen.push(`${this.req.method} ${uri}`)
        return answer(uri)
      })
  return seen
}

/**
 * Serves EC2's query API (a POST of the form): `answer` answers an action, or undefined for one the
 * suite does not serve (EC2's InvalidAction). Each request's form is recorded in `calls`.
 */
export function serveEc2(
  answer: (action: string, q: URLSearchParams) => Answer | undefined,
  calls: URLSearchParams[] = [],
): URLSearchParams[] {
  nock(`https://${new URL(HOSTS.ec2).host}`)
    .persist()
    .post('/')
    .reply((_uri, body) => {
      const q = new URLSearchParams(String(body))
      calls.push(q)
      const action = q.get('Action') ?? ''
      const a = answer(action, q)
      if (a) return [a.status, a.body, a.headers]
      return [
        400,
        `<Response><Errors><Error><Code>InvalidAction</Code><Message>${action}</Message></Error></Errors></Response>`,
        {},
      ]
    })
  return calls
}

/** DescribeInstanceTypeOfferings: every type offered in every zone given. */
export const offeringsAnswer = (types: { name: string }[], zones: string[]): Answer =>
  ec2Answer('DescribeInstanceTypeOfferings', {
    instanceTypeOfferingSet: types.flatMap((t) =>
      zones.map((z) => ({ instanceType: t.name, locationType: 'availability-zone', location: z })),
    ),
  })
