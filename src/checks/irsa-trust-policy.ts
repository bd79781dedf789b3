import type { PolicyStatement } from '../facts/types.js'
import { need, needRelease, skip } from './lib/facts.js'
import { controllerServiceAccount, irsaStatements } from './lib/trust.js'
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
          summary: 'register the cluster OIDC provider',
          commands: [
            `eksctl utils associate-iam-oidc-provider --cluster ${facts.meta.clusterName} --region ${facts.meta.region} --approve`,
          ],
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
    const statements = irsaStatements(role.role.trust, issuer)
    const exact = statements.filter((s) => s.exact && s.sub === expectedSub && s.audOk)
    const loose = statements.filter((s) => !s.exact)
    const providerArn =
      provider?.arn ?? `arn:${facts.meta.partition}:iam::${facts.meta.accountId}:oidc-provider/${issuer}`
    const fix = trustFix(roleName, providerArn, issuer, expectedSub)
    for (const s of loose) {
      findings.push({
        status: 'fail',
        subject: role.role.arn,
        message: `trust of ${roleName} uses ${s.operator} on ${issuer}:sub = ${JSON.stringify(s.sub)}: any matching service account can assume the controller role`,
        evidence: { statement: s.statement },
        fix,
      })
    }
    if (exact.length > 0) {
      findings.push({
        status: 'pass',
        subject: role.role.arn,
        message: `${roleName} trusts exactly ${expectedSub} via ${issuer}`,
      })
      return findings
    }
    const subs = statements.map((s) => s.sub).filter(Boolean)
    findings.push({
      status: 'fail',
      subject: role.role.arn,
      message:
        subs.length > 0
          ? `trust of ${roleName} allows ${subs.join(', ')}, but the controller runs as ${expectedSub}`
          : `trust of ${roleName} has no sts:AssumeRoleWithWebIdentity statement for ${issuer} with :sub = ${expectedSub} and :aud = sts.amazonaws.com`,
      evidence: { expectedSub, trust: role.role.trust },
      fix,
    })
    return findings
  },
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
