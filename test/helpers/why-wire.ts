// What the `why` suites on the wire share: the process environment they run in (a kubeconfig for the
// mocked API, static AWS keys, no endpoint override, no instance metadata), restored after, and the
// answer of the mocked Kubernetes API to a path the suite does not serve.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { KUBE_SERVER, KUBE_TOKEN, kubeconfigYaml } from './mock-cluster.js'

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
