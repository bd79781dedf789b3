import type { Facts, HelmRelease } from '../../facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../policy/types.js'
import { evaluate } from '../../policy/evaluate.js'
import { valueAt } from './facts.js'

const list = (v: unknown): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)])

/** The namespace/name the running chart uses for the controller ServiceAccount. */
export function controllerServiceAccount(
  facts: Facts,
  release: HelmRelease,
): { namespace: string; name: string } {
  const live = facts.kube.serviceAccount.ok ? facts.kube.serviceAccount.value : null
  if (live) return { namespace: live.metadata.namespace ?? release.namespace, name: live.metadata.name }
  const configured = valueAt(release.computedValues, 'serviceAccount.name')
  const name = typeof configured === 'string' && configured !== '' ? configured : release.name
  return { namespace: release.namespace, name }
}

export interface IrsaStatement {
  statement: PolicyStatement
  sub: string
  operator: string
  audOk: boolean
  /** The :aud conditions as written (`StringEquals sts.amazon.com`), to name them in a finding. */
  aud: string
  /** Sid, or the statement's place in the document (`statement 2`). */
  label: string
}

/** The Allow statements of a trust policy that let web identities of `issuer` assume the role. */
export function irsaStatements(trust: PolicyDocument, issuer: string): IrsaStatement[] {
  const out: IrsaStatement[] = []
  for (const [i, s] of trust.Statement.entries()) {
    if (s.Effect !== 'Allow') continue
    if (!list(s.Action).some((a) => a === 'sts:AssumeRoleWithWebIdentity' || a === 'sts:*' || a === '*'))
      continue
    const principal = s.Principal
    const federated = principal === '*' ? ['*'] : list(principal?.Federated)
    if (!federated.some((f) => f === '*' || f.endsWith(`oidc-provider/${issuer}`))) continue
    const cond = s.Condition ?? {}
    let sub = ''
    let operator = 'none'
    for (const [op, kv] of Object.entries(cond)) {
      const v = kv[`${issuer}:sub`]
      if (v !== undefined) {
        sub = list(v).join(',')
        operator = op
      }
    }
    // The controller's projected token carries aud = sts.amazonaws.com: the statement admits it only
    // if its :aud conditions, each under its own operator (StringLike, StringNotEquals...), hold for
    // that audience. The IAM evaluator reads the operators; no :aud condition at all holds.
    const audKey = `${issuer}:aud`
    const audConditions = Object.fromEntries(
      Object.entries(cond).flatMap(([op, kv]) =>
        kv[audKey] === undefined ? [] : [[op, { [audKey]: kv[audKey] }]],
      ),
    )
    const audOk =
      evaluate([{ Statement: [{ Effect: 'Allow', Action: '*', Resource: '*', Condition: audConditions }] }], {
        action: 'sts:AssumeRoleWithWebIdentity',
        resource: '*',
        context: { [audKey]: 'sts.amazonaws.com' },
      }).decision === 'allowed'
    const aud = Object.entries(audConditions)
      .map(
        ([op, kv]) =>
          `${op} ${list(kv[audKey])
            .map((v) => JSON.stringify(v))
            .join(', ')}`,
      )
      .join(' and ')
    out.push({
      statement: s,
      sub,
      operator,
      audOk,
      aud,
      label: s.Sid ? `statement ${JSON.stringify(s.Sid)}` : `statement ${i + 1}`,
    })
  }
  return out
}
