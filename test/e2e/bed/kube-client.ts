// A deliberately tiny Kubernetes REST client (node:https only) for the bed and
// for scenario assertions. It is *not* karpctl's client: tests should observe
// the cluster through something independent of the code under test.
import { request } from 'node:https'

export interface KubeCreds {
  server: string // https://127.0.0.1:port
  token: string
  caPem: string
}

export interface KubeResponse<T = unknown> {
  status: number
  body: T
  text: string
}

export class KubeError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly text: string,
  ) {
    super(`${method} ${path} -> HTTP ${status}: ${text.slice(0, 2000)}`)
  }
}

// Loose object shape for manifests and answers.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type KubeObject = Record<string, any>

const CORE_KINDS: Record<string, string> = {
  Namespace: 'namespaces',
  Node: 'nodes',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  ServiceAccount: 'serviceaccounts',
  Service: 'services',
  Pod: 'pods',
}

/** Plural resource name for the kinds the bed touches (and a naive fallback). */
export function pluralOf(kind: string): string {
  const k = CORE_KINDS[kind]
  if (k) return k
  const lower = kind.toLowerCase()
  if (lower.endsWith('class')) return `${lower}es`
  if (lower.endsWith('y')) return `${lower.slice(0, -1)}ies`
  return `${lower}s`
}

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'Node',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'NodePool',
  'NodeClaim',
  'EC2NodeClass',
  'NodeOverlay',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
])

/** REST path of an object (or of its collection when name is omitted). */
export function objectPath(apiVersion: string, kind: string, namespace?: string, name?: string): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`
  const ns = namespace && !CLUSTER_SCOPED.has(kind) ? `/namespaces/${encodeURIComponent(namespace)}` : ''
  return `${base}${ns}/${pluralOf(kind)}${name ? `/${encodeURIComponent(name)}` : ''}`
}

export class KubeClient {
  constructor(readonly creds: KubeCreds) {}

  async request<T = KubeObject>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<KubeResponse<T>> {
    const url = new URL(path, this.creds.server)
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    return new Promise((res, rej) => {
      const req = request(
        url,
        {
          method,
          ca: this.creds.caPem,
          headers: {
            authorization: `Bearer ${this.creds.token}`,
            accept: 'application/json',
            ...(payload !== undefined
              ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }
              : {}),
          },
          timeout: 30_000,
        },
        (r) => {
          const chunks: Buffer[] = []
          r.on('data', (c: Buffer) => chunks.push(c))
          r.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            let parsed: unknown = text
            try {
              parsed = text ? JSON.parse(text) : undefined
            } catch {
              // not JSON (e.g. /readyz)
            }
            res({ status: r.statusCode ?? 0, body: parsed as T, text })
          })
          r.on('error', rej)
        },
      )
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)))
      req.on('error', rej)
      if (payload !== undefined) req.write(payload)
      req.end()
    })
  }

  private async ok<T>(method: string, path: string, body?: unknown, ct?: string): Promise<T> {
    const r = await this.request<T>(method, path, body, ct)
    if (r.status < 200 || r.status >= 300) throw new KubeError(method, path, r.status, r.text)
    return r.body
  }

  /** GET; undefined on 404. */
  async get<T = KubeObject>(path: string): Promise<T | undefined> {
    const r = await this.request<T>('GET', path)
    if (r.status === 404) return undefined
    if (r.status < 200 || r.status >= 300) throw new KubeError('GET', path, r.status, r.text)
    return r.body
  }

  async list(path: string, labelSelector?: string): Promise<KubeObject[]> {
    const q = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : ''
    const body = await this.ok<KubeObject>('GET', `${path}${q}`)
    return (body.items ?? []) as KubeObject[]
  }

  async create(obj: KubeObject): Promise<KubeObject> {
    const path = objectPath(obj.apiVersion, obj.kind, obj.metadata?.namespace)
    return this.ok('POST', path, obj)
  }

  /** Server-side apply (force) with field manager `karpctl-e2e-bed`. */
  async apply(obj: KubeObject, fieldManager = 'karpctl-e2e-bed'): Promise<KubeObject> {
    const path = objectPath(obj.apiVersion, obj.kind, obj.metadata?.namespace, obj.metadata?.name)
    return this.ok(
      'PATCH',
      `${path}?fieldManager=${encodeURIComponent(fieldManager)}&force=true`,
      obj,
      'application/apply-patch+yaml',
    )
  }

  /** JSON merge patch; `subresource` e.g. 'status'. */
  async mergePatch(path: string, patch: unknown, subresource?: string): Promise<KubeObject> {
    return this.ok(
      'PATCH',
      subresource ? `${path}/${subresource}` : path,
      patch,
      'application/merge-patch+json',
    )
  }

  /** DELETE; true when something was deleted, false on 404. */
  async delete(
    path: string,
    propagation: 'Background' | 'Foreground' | 'Orphan' = 'Background',
  ): Promise<boolean> {
    const r = await this.request('DELETE', path, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: propagation,
    })
    if (r.status === 404) return false
    if (r.status < 200 || r.status >= 300) throw new KubeError('DELETE', path, r.status, r.text)
    return true
  }
}
