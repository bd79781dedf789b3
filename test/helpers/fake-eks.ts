// A fake EKS REST API on nock, for what moto does not offer: access entries and Pod Identity
// associations (create, read, update, delete, tags), with injectable error answers per operation.
import type { TestContext } from 'node:test'
import nock from 'nock'

export const EKS = 'https://eks.us-west-2.amazonaws.com'
const associationArn = (id: string) => `arn:aws:eks:us-west-2:123456789012:podidentityassociation/demo/${id}`

export interface FakeEks {
  entries: Map<string, { type: string; tags: Record<string, string> }>
  associations: Map<
    string,
    { namespace: string; serviceAccount: string; roleArn: string; tags: Record<string, string> }
  >
  /** Error answers to give, in order, per operation, before answering normally. */
  faults: Record<string, { status: number; type: string; message: string }[]>
  writes: string[]
}

const error = (status: number, type: string, message: string) =>
  [status, { message }, { 'x-amzn-errortype': type, 'content-type': 'application/json' }] as const

export function fakeEks(t: TestContext): FakeEks {
  const f: FakeEks = { entries: new Map(), associations: new Map(), faults: {}, writes: [] }
  const fault = (op: string) => f.faults[op]?.shift()
  const scope = nock(EKS).persist()
  scope.get(/^\/clusters\/demo\/access-entries\/.+/).reply((uri) => {
    const arn = decodeURIComponent(uri.split('/').pop() ?? '')
    const e = f.entries.get(arn)
    if (!e)
      return error(404, 'ResourceNotFoundException', `The specified access entry resource is not found.`)
    return [200, { accessEntry: { clusterName: 'demo', principalArn: arn, type: e.type, tags: e.tags } }]
  })
  scope.post('/clusters/demo/access-entries').reply((_uri, body) => {
    const b = body as { principalArn: string; type: string; tags: Record<string, string> }
    const x = fault('CreateAccessEntry')
    if (x) return error(x.status, x.type, x.message)
    f.writes.push(`CreateAccessEntry ${b.principalArn} ${b.type}`)
    if (f.entries.has(b.principalArn))
      return error(
        409,
        'ResourceInUseException',
        'The specified access entry resource is already in use on this cluster.',
      )
    f.entries.set(b.principalArn, { type: b.type, tags: b.tags })
    return [200, { accessEntry: { principalArn: b.principalArn, type: b.type } }]
  })
  scope.get(/^\/clusters\/demo\/pod-identity-associations(\?.*)?$/).reply((uri) => {
    const q = new URL(uri, EKS).searchParams
    const list = [...f.associations].filter(
      ([, a]) => a.namespace === q.get('namespace') && a.serviceAccount === q.get('serviceAccount'),
    )
    return [
      200,
      {
        associations: list.map(([id, a]) => ({
          associationId: id,
          namespace: a.namespace,
          serviceAccount: a.serviceAccount,
          clusterName: 'demo',
        })),
      },
    ]
  })
  scope.get(/^\/clusters\/demo\/pod-identity-associations\/[^/?]+$/).reply((uri) => {
    const id = uri.split('/').pop() ?? ''
    const a = f.associations.get(id)
    if (!a) return error(404, 'ResourceNotFoundException', 'not found')
    return [200, { association: { associationId: id, associationArn: associationArn(id), ...a } }]
  })
  scope.post('/clusters/demo/pod-identity-associations').reply((_uri, body) => {
    const b = body as {
      namespace: string
      serviceAccount: string
      roleArn: string
      tags: Record<string, string>
    }
    const x = fault('CreatePodIdentityAssociation')
    if (x) return error(x.status, x.type, x.message)
    f.writes.push(`CreatePodIdentityAssociation ${b.namespace}/${b.serviceAccount} ${b.roleArn}`)
    const id = `a-${f.associations.size + 1}`
    f.associations.set(id, {
      namespace: b.namespace,
      serviceAccount: b.serviceAccount,
      roleArn: b.roleArn,
      tags: b.tags,
    })
    return [200, { association: { associationId: id, associationArn: associationArn(id), ...b } }]
  })
  // TagResource / UntagResource on an association (the pending-restart marker of doctor --fix).
  const byArn = (uri: string) => {
    const arn = decodeURIComponent(new URL(uri, EKS).pathname.replace(/^\/tags\//, ''))
    return [...f.associations].find(([id]) => associationArn(id) === arn)
  }
  scope.post(/^\/tags\/.+/).reply((uri, body) => {
    const hit = byArn(uri)
    if (!hit) return error(404, 'ResourceNotFoundException', 'not found')
    const x = fault('TagResource')
    if (x) return error(x.status, x.type, x.message)
    Object.assign(hit[1].tags, (body as { tags: Record<string, string> }).tags)
    f.writes.push(`TagResource ${hit[0]} ${Object.keys((body as { tags: object }).tags).join(',')}`)
    return [200, {}]
  })
  scope.delete(/^\/tags\/.+/).reply((uri) => {
    const hit = byArn(uri)
    if (!hit) return error(404, 'ResourceNotFoundException', 'not found')
    const keys = new URL(uri, EKS).searchParams.getAll('tagKeys')
    for (const k of keys) delete hit[1].tags[k]
    f.writes.push(`UntagResource ${hit[0]} ${keys.join(',')}`)
    return [200, {}]
  })
  scope.post(/^\/clusters\/demo\/pod-identity-associations\/[^/]+$/).reply((uri, body) => {
    const id = uri.split('/').pop() ?? ''
    const a = f.associations.get(id)
    if (!a) return error(404, 'ResourceNotFoundException', 'not found')
    a.roleArn = (body as { roleArn: string }).roleArn
    f.writes.push(`UpdatePodIdentityAssociation ${id} ${a.roleArn}`)
    return [200, { association: { associationId: id, ...a } }]
  })
  scope.delete(/^\/clusters\/demo\/access-entries\/.+/).reply((uri) => {
    const arn = decodeURIComponent(uri.split('/').pop() ?? '')
    f.writes.push(`DeleteAccessEntry ${arn}`)
    return f.entries.delete(arn) ? [200, {}] : error(404, 'ResourceNotFoundException', 'not found')
  })
  scope.delete(/^\/clusters\/demo\/pod-identity-associations\/[^/]+$/).reply((uri) => {
    const id = uri.split('/').pop() ?? ''
    f.writes.push(`DeletePodIdentityAssociation ${id}`)
    return f.associations.delete(id)
      ? [200, { association: { associationId: id } }]
      : error(404, 'ResourceNotFoundException', 'not found')
  })
  nock.disableNetConnect()
  const saved = { ...process.env }
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    AWS_EC2_METADATA_DISABLED: 'true',
  })
  delete process.env.AWS_ENDPOINT_URL
  delete process.env.AWS_PROFILE
  t.after(() => {
    nock.cleanAll()
    nock.enableNetConnect()
    process.env = saved
  })
  return f
}
