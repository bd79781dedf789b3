// A fake EventBridge on nock (its JSON protocol: one POST per call, the operation in X-Amz-Target), for
// the rules doctor --fix repairs in place: read, tag, target and enable, each write recorded.
import nock from 'nock'

export const EVENTS = 'https://events.us-west-2.amazonaws.com'

export interface FakeRule {
  arn: string
  state: string
  eventPattern: string
  targets: { Id: string; Arn: string }[]
  tags: Record<string, string>
}

export interface FakeEvents {
  rules: Map<string, FakeRule>
  writes: string[]
}

const notFound = (message: string) =>
  [
    400,
    { __type: 'ResourceNotFoundException', message },
    { 'content-type': 'application/x-amz-json-1.1' },
  ] as const

/** Call after the fake that sets the credentials and disables the network (fakeEks). */
export function fakeEvents(rules: Record<string, FakeRule>): FakeEvents {
  const f: FakeEvents = { rules: new Map(Object.entries(rules)), writes: [] }
  const byArn = (arn: string) => [...f.rules].find(([, r]) => r.arn === arn)
  nock(EVENTS)
    .persist()
    .post('/')
    .reply(function (_uri, body) {
      const op = String(this.req.headers['x-amz-target']).replace(/^AWSEvents\./, '')
      const b = (typeof body === 'string' ? JSON.parse(body) : body) as Record<string, unknown>
      const rule = f.rules.get(String(b.Name ?? b.Rule ?? ''))
      switch (op) {
        case 'DescribeRule':
          if (!rule) return notFound(`Rule ${String(b.Name)} does not exist.`)
          return [200, { Name: b.Name, Arn: rule.arn, State: rule.state, EventPattern: rule.eventPattern }]
        case 'ListTargetsByRule':
          return rule ? [200, { Targets: rule.targets }] : notFound('no rule')
        case 'ListTagsForResource': {
          const hit = byArn(String(b.ResourceARN))
          if (!hit) return notFound('no rule')
          return [200, { Tags: Object.entries(hit[1].tags).map(([Key, Value]) => ({ Key, Value })) }]
        }
        case 'TagResource': {
          const hit = byArn(String(b.ResourceARN))
          if (!hit) return notFound('no rule')
          for (const t of b.Tags as { Key: string; Value: string }[]) hit[1].tags[t.Key] = t.Value
          f.writes.push(`TagResource ${hit[0]} ${(b.Tags as { Key: string }[]).map((t) => t.Key).join(',')}`)
          return [200, {}]
        }
        case 'EnableRule':
          if (!rule) return notFound('no rule')
          rule.state = 'ENABLED'
          f.writes.push(`EnableRule ${String(b.Name)}`)
          return [200, {}]
        case 'PutTargets':
          if (!rule) return notFound('no rule')
          for (const t of b.Targets as { Id: string; Arn: string }[])
            rule.targets = [...rule.targets.filter((x) => x.Id !== t.Id), t]
          f.writes.push(`PutTargets ${String(b.Rule)}`)
          return [200, { FailedEntryCount: 0, FailedEntries: [] }]
        default:
          return [400, { __type: 'UnknownOperationException', message: op }]
      }
    })
  return f
}
