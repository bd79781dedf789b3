import type { PolicyStatement } from '../policy/types.js'
import { parseOperator } from '../policy/evaluate.js'
import { need, needRelease, shellQuote, skip } from './lib/facts.js'
import { WITHOUT_EKSCTL } from './lib/node-access.js'
import { inStack, ownership } from './lib/owners.js'
import { isWildcard, wildcardMatch } from './lib/policy.js'
import { controllerServiceAccount, irsaStatements, type IrsaStatement } from './lib/trust.js'
import type { Check, Finding } from './types.js'

export const irsaTrustPolicy: Check = {
  meta: {
    id: 'irsa-trust-policy',
    title: 'IRSA trust policy names the running service account exactly',
    category: 'security',
    severity: 'error',
    docs: 'With IRSA the controller role must trust the cluster OIDC provider for sts:AssumeRoleWithWebIdentity with StringEquals on :sub = system:serviceaccount:<ns>:<sa> and :aud = sts.amazonaws.com.',
  },
  run(facts) {
    const release = needRelease(facts)
    if (facts.iam.controllerIdentity !== 'irsa')
      skip(`the controller does not use IRSA (identity: ${facts.iam.controllerIdentity})`)
    const cluster = need(facts.eks.cluster)
    if (!cluster?.oidcIssuer) skip('the cluster has no OIDC issuer')
    const issuer = cluster.oidcIssuer.replace(/^https:\/\//, '')
    const { namespace, name } = controllerServiceAccount(facts, release)
    const expectedSub = `system:serviceaccount:${namespace}:${name}`
    const roleName = facts.iam.controllerRoleName as string
    const findings: Finding[] = []

    const provider = need(facts.iam.oidcProviders).find((p) => p.url === issuer)
    if (!provider) {
      findings.push({
        status: 'fail',
        subject: issuer,
        message: `no IAM OIDC provider is registered for the cluster issuer ${issuer}`,
        fix: {
          summary: 'register the cluster OIDC provider, with eksctl or without it (below)',
          commands: [
            `eksctl utils associate-iam-oidc-provider --cluster ${facts.meta.clusterName} --region ${facts.meta.region} --approve`,
          ],
          // IAM no longer needs the issuer's thumbprint for EKS's issuers: it trusts their CA itself.
          alternative: {
            label: WITHOUT_EKSCTL,
            commands: [
              `aws iam create-open-id-connect-provider --url ${shellQuote(`https://${issuer}`)} --client-id-list sts.amazonaws.com`,
            ],
          },
        },
      })
    }

    const roleRead = facts.iam.roles[roleName]
    if (!roleRead) skip(`controller role ${roleName} was not collected`)
    const role = need(roleRead)
    if (!role) {
      return [
        ...findings,
        {
          status: 'fail',
          subject: roleName,
          message: `the ServiceAccount ${namespace}/${name} names role ${roleName}, which does not exist`,
        },
      ]
    }
    const statements = irsaStatements(role.role.trust, issuer).map((s) => ({
      ...s,
      ...judgeSub(s, expectedSub),
    }))
    const providerArn =
      provider?.arn ?? `arn:${facts.meta.partition}:iam::${facts.meta.accountId}:oidc-provider/${issuer}`
    // A stack's role (eksctl's, the getting-started guide's) has its trust changed in the stack.
    const fix = inStack(
      trustFix(roleName, providerArn, issuer, expectedSub),
      ownership(facts, roleName, role.role.tags),
      `controller role ${roleName}`,
    )
    // A statement that lets more than the running service account in is a security finding, and its
    // fix (the exact trust) is also the fix for everything else wrong with the trust: one finding.
    const broad = statements.filter((s) => s.broad)
    for (const s of broad) {
      findings.push({
        status: 'fail',
        subject: role.role.arn,
        message: broadMessage(roleName, issuer, s, expectedSub),
        evidence: { statement: s.statement, expectedSub, admitsController: s.admits && s.audOk },
        fix,
      })
    }
    // Exact in effect: admits the running service account and nothing wider (StringLike without a
    // wildcard compares like StringEquals).
    const exact = statements.filter((s) => s.admits && !s.broad && s.audOk)
    if (exact.length > 0) {
      findings.push({
        status: 'pass',
        subject: role.role.arn,
        message: `${roleName} trusts exactly ${expectedSub} via ${issuer}`,
      })
      return findings
    }
    if (broad.some((s) => s.admits && s.audOk)) return findings
    const subs = statements.filter((s) => s.sub).map(lettingIn)
    const wrongAud = statements.filter((s) => s.admits && !s.audOk)
    findings.push({
      status: 'fail',
      subject: role.role.arn,
      message:
        wrongAud.length > 0
          ? `trust of ${roleName} allows ${expectedSub} only with ${wrongAud.map((w) => `:aud ${w.aud} (${w.label})`).join(', ')}, but the controller's token carries aud "sts.amazonaws.com": the controller cannot assume the role`
          : subs.length > 0
            ? `trust of ${roleName} allows ${subs.join(', ')}${statements.some((s) => s.literalWildcard) ? ' (StringEquals compares literally: * matches only a "*")' : ''}, but the controller runs as ${expectedSub}`
            : `trust of ${roleName} has no sts:AssumeRoleWithWebIdentity statement for ${issuer} with :sub = ${expectedSub} and :aud = sts.amazonaws.com`,
      evidence: { expectedSub, trust: role.role.trust },
      fix,
    })
    return findings
  },
}

interface SubJudgement {
  /** The :sub condition admits the running service account. */
  admits: boolean
  /** The :sub condition admits other service accounts too (a wildcard pattern, a negation, no :sub at all). */
  broad: boolean
  /** StringEquals with `*` or `?`: compared literally, it is no wildcard. */
  literalWildcard: boolean
}

/** What a statement's :sub condition lets in, read with the operator's own semantics. */
function judgeSub(s: IrsaStatement, expected: string): SubJudgement {
  const values = s.sub === '' ? [] : s.sub.split(',')
  if (s.operator === 'none') return { admits: true, broad: true, literalWildcard: false }
  const { base } = parseOperator(s.operator)
  const hasWildcard = values.some(isWildcard)
  switch (base) {
    case 'StringEquals':
      return { admits: values.includes(expected), broad: false, literalWildcard: hasWildcard }
    case 'StringEqualsIgnoreCase':
      return {
        admits: values.some((v) => v.toLowerCase() === expected.toLowerCase()),
        broad: false,
        literalWildcard: hasWildcard,
      }
    case 'StringLike':
      return {
        admits: values.some((v) => wildcardMatch(v, expected)),
        broad: hasWildcard,
        literalWildcard: false,
      }
    case 'StringNotEquals':
      return { admits: !values.includes(expected), broad: true, literalWildcard: false }
    case 'StringNotLike':
      return { admits: !values.some((v) => wildcardMatch(v, expected)), broad: true, literalWildcard: false }
    default:
      // An operator the check does not read (e.g. ArnLike on :sub): not exact, so not trusted as such.
      return { admits: false, broad: true, literalWildcard: false }
  }
}

/**
 * What a statement's :sub lets in, in words: a negation lets in everyone but its values (not "allows"
 * the service account it names), and an operator the check does not read is named as such.
 */
function lettingIn(s: IrsaStatement): string {
  const { base } = parseOperator(s.operator)
  if (base === 'StringNotEquals' || base === 'StringNotLike') return `every service account except ${s.sub}`
  if (['StringEquals', 'StringEqualsIgnoreCase', 'StringLike'].includes(base)) return s.sub
  return `${s.sub} (compared by ${s.operator}, which does not match a service account name)`
}

function broadMessage(roleName: string, issuer: string, s: IrsaStatement & SubJudgement, expected: string) {
  const who = s.admits
    ? ` (the controller's ${expected} among them)`
    : ` (but not the controller's ${expected})`
  if (s.operator === 'none')
    return `security: trust of ${roleName} sets no ${issuer}:sub condition: every service account of the cluster can assume the controller role`
  return `security: trust of ${roleName} uses ${s.operator} on ${issuer}:sub = ${JSON.stringify(s.sub)}: any matching service account can assume the controller role${who}`
}

function trustFix(roleName: string, providerArn: string, issuer: string, sub: string) {
  const statement: PolicyStatement = {
    Effect: 'Allow',
    Principal: { Federated: providerArn },
    Action: 'sts:AssumeRoleWithWebIdentity',
    Condition: { StringEquals: { [`${issuer}:sub`]: sub, [`${issuer}:aud`]: 'sts.amazonaws.com' } },
  }
  const doc = JSON.stringify({ Version: '2012-10-17', Statement: [statement] })
  return {
    summary: `restrict the trust of ${roleName} to ${sub}`,
    commands: [`aws iam update-assume-role-policy --role-name ${roleName} --policy-document '${doc}'`],
  }
}
