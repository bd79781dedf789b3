import type { Facts, PodIdentityAssociation } from '../facts/types.js'
import type { PolicyDocument } from '../policy/types.js'
import { need, needRelease, roleNameFromArn, shellQuote, skip } from './lib/facts.js'
import { controllerDeploymentName } from './lib/install.js'
import { missingServiceTrust } from './lib/policy.js'
import { readOr } from './lib/read.js'
import { controllerServiceAccount } from './lib/trust.js'
import type { Check, Finding, Fix } from './types.js'

const POD_IDENTITY_SERVICE = 'pods.eks.amazonaws.com'
const POD_IDENTITY_ACTIONS = ['sts:AssumeRole', 'sts:TagSession']
const AGENT_ADDON = 'eks-pod-identity-agent'
const IRSA_ANNOTATION = 'eks.amazonaws.com/role-arn'

/** The IRSA role annotation on the live ServiceAccount, else as the chart rendered it. */
function irsaAnnotation(facts: Facts): string | undefined {
  const live = facts.kube.serviceAccount.ok ? facts.kube.serviceAccount.value : null
  const fromLive = live?.metadata.annotations?.[IRSA_ANNOTATION]
  if (fromLive) return fromLive
  const release = facts.kube.release.ok ? facts.kube.release.value : null
  const rendered = release?.renderedServiceAccount?.annotations[IRSA_ANNOTATION]
  return typeof rendered === 'string' && rendered !== '' ? rendered : undefined
}

export const podIdentity: Check = {
  meta: {
    id: 'pod-identity',
    title: 'EKS Pod Identity gives the controller its role',
    category: 'iam',
    severity: 'error',
    docs: 'With EKS Pod Identity the controller ServiceAccount needs an association to the controller role, the role must trust pods.eks.amazonaws.com for sts:AssumeRole and sts:TagSession, and the eks-pod-identity-agent add-on must run.',
  },
  run(facts) {
    const release = needRelease(facts)
    const sa = controllerServiceAccount(facts, release)
    const subject = `${sa.namespace}/${sa.name}`
    const annotation = irsaAnnotation(facts)
    // The collector's verdict wins; without one, an IRSA annotation means IRSA.
    const identity = facts.iam.controllerIdentity
    if (identity === 'irsa' || (identity !== 'pod-identity' && annotation)) {
      skip(
        `the controller uses IRSA (${IRSA_ANNOTATION} on ${subject}), not Pod Identity: see irsa-trust-policy`,
      )
    }
    // Unreadable associations (e.g. an endpoint without Pod Identity) make the whole check unknown.
    const associations = need(facts.eks.podIdentityAssociations)
    const association = associations.find((a) => a.namespace === sa.namespace && a.serviceAccount === sa.name)
    if (!association) return [missingAssociation(facts, subject, sa, associations)]

    const findings: Finding[] = [
      {
        status: 'pass',
        subject,
        message: `Pod Identity association ${association.associationId} maps ${subject} to ${association.roleArn ?? facts.iam.controllerRoleName ?? 'a role'}`,
        evidence: { associationId: association.associationId, roleArn: association.roleArn },
      },
    ]
    findings.push(...roleTrust(facts, association))
    findings.push(...agentAddon(facts))
    return findings
  },
}

/**
 * The role the association should name, only where it is proven: the controller role discovered and
 * read, else the one role of the near-miss associations (EKS checked it when it made them). Never a
 * role named by karpctl's convention: on another tool's install that role does not exist.
 */
function provenRole(facts: Facts, near: PodIdentityAssociation[]): { arn: string; source: string } | null {
  const name = facts.iam.controllerRoleName
  const read = name ? facts.iam.roles[name] : undefined
  if (read?.ok && read.value) return { arn: read.value.role.arn, source: `controller role ${name}` }
  const roles = [...new Set(near.flatMap((a) => (a.roleArn ? [a.roleArn] : [])))]
  const only = roles.length === 1 ? roles[0]! : undefined
  if (!only) return null
  const from = near.filter((a) => a.roleArn === only).map((a) => a.associationId)
  return { arn: only, source: `the role of association ${from.join(', ')}` }
}

function missingAssociation(
  facts: Facts,
  subject: string,
  sa: { namespace: string; name: string },
  associations: PodIdentityAssociation[],
): Finding {
  const { clusterName, region } = facts.meta
  const named = facts.iam.controllerRoleName
  const identityless = facts.iam.controllerIdentity === 'none'
  // An association made for another namespace or service account (a chart installed elsewhere than
  // the association says) is the likely cause: name it and what it is for.
  const near = associations.filter(
    (a) =>
      (named && a.roleArn && roleNameFromArn(a.roleArn) === named) ||
      a.serviceAccount === sa.name ||
      a.namespace === sa.namespace,
  )
  const role = provenRole(facts, near)
  const nearText = near.length
    ? `; ${near
        .map(
          (a) =>
            `association ${a.associationId} is for ${a.namespace}/${a.serviceAccount}${a.roleArn ? ` (role ${roleNameFromArn(a.roleArn)})` : ''}`,
        )
        .join(', ')}, not for ${subject}, which the controller runs as`
    : ''
  return {
    status: 'fail',
    subject,
    message: identityless
      ? `the controller ServiceAccount ${subject} has no AWS identity: no IRSA annotation and no Pod Identity association (it would fall back to the node's instance role)${nearText}`
      : `no Pod Identity association for ${subject} in cluster ${clusterName}${nearText}`,
    code: 'no-association',
    evidence: {
      serviceAccount: subject,
      associations: associations.map(
        (a) => `${a.namespace}/${a.serviceAccount} → ${a.roleArn ?? a.associationId}`,
      ),
      ...(role ? { roleArn: role.arn } : {}),
    },
    fix: role
      ? {
          summary: `associate ${subject} with ${roleNameFromArn(role.arn)} (${role.source}), then restart the controller so it picks up the credentials`,
          commands: [
            `aws eks create-pod-identity-association --cluster-name ${clusterName} --namespace ${sa.namespace} --service-account ${sa.name} --role-arn ${role.arn} --region ${region}`,
            `kubectl -n ${sa.namespace} rollout restart deployment ${controllerDeploymentName(facts)}`,
          ],
        }
      : {
          summary: `no controller role is known (none discovered, no association names one): associate ${subject} with the controller role (aws eks create-pod-identity-association --role-arn …), or install it with karpctl install`,
          commands: [],
        },
  }
}

function roleTrust(facts: Facts, association: PodIdentityAssociation): Finding[] {
  const roleName = association.roleArn ? roleNameFromArn(association.roleArn) : facts.iam.controllerRoleName
  if (!roleName) {
    return [
      {
        status: 'unknown',
        subject: association.associationId,
        message: `the role of Pod Identity association ${association.associationId} was not read (DescribePodIdentityAssociation)`,
      },
    ]
  }
  const findings: Finding[] = []
  const role = readOr(facts.iam.roles[roleName], findings, roleName, `IAM role ${roleName}`)
  if (role === undefined) return findings
  if (role === null) {
    return [
      {
        status: 'fail',
        subject: association.roleArn ?? roleName,
        message: `Pod Identity association ${association.associationId} names role ${roleName}, which does not exist`,
        evidence: { associationId: association.associationId, roleArn: association.roleArn },
        fix: {
          summary: `create ${roleName} trusting ${POD_IDENTITY_SERVICE}, or point the association at the existing controller role`,
          commands: [
            `aws iam create-role --role-name ${roleName} --assume-role-policy-document ${shellQuote(JSON.stringify(podIdentityTrust([])))}`,
          ],
        },
      },
    ]
  }
  const missing = missingServiceTrust(role.role.trust, [POD_IDENTITY_SERVICE], POD_IDENTITY_ACTIONS)
  if (missing.length === 0) {
    return [
      {
        status: 'pass',
        subject: role.role.arn,
        message: `${roleName} trusts ${POD_IDENTITY_SERVICE} for ${POD_IDENTITY_ACTIONS.join(' + ')}`,
      },
    ]
  }
  return [
    {
      status: 'fail',
      subject: role.role.arn,
      message: `trust policy of ${roleName} does not let ${POD_IDENTITY_SERVICE} perform ${missing.join(', ')}: the Pod Identity agent cannot hand the controller credentials`,
      evidence: { missingActions: missing, trust: role.role.trust },
      fix: trustFix(roleName, role.role.trust),
    },
  ]
}

function podIdentityTrust(existing: PolicyDocument['Statement']): PolicyDocument {
  return {
    Version: '2012-10-17',
    Statement: [
      ...existing,
      { Effect: 'Allow', Principal: { Service: POD_IDENTITY_SERVICE }, Action: [...POD_IDENTITY_ACTIONS] },
    ],
  }
}

/** Adds the Pod Identity statement and keeps the role's other trust statements (e.g. for IRSA). */
function trustFix(roleName: string, trust: PolicyDocument): Fix {
  const doc = podIdentityTrust(trust.Statement)
  return {
    summary: `let ${POD_IDENTITY_SERVICE} assume ${roleName} and tag the session (other trust statements are kept)`,
    commands: [
      `aws iam update-assume-role-policy --role-name ${roleName} --policy-document ${shellQuote(JSON.stringify(doc))}`,
    ],
  }
}

function agentAddon(facts: Facts): Finding[] {
  const findings: Finding[] = []
  const addons = readOr(facts.eks.addons, findings, AGENT_ADDON, 'EKS add-ons')
  if (addons === undefined) return findings
  if (addons.includes(AGENT_ADDON)) {
    return [{ status: 'pass', subject: AGENT_ADDON, message: `the ${AGENT_ADDON} add-on is installed` }]
  }
  const { clusterName, region } = facts.meta
  return [
    {
      status: 'fail',
      subject: AGENT_ADDON,
      message: `the ${AGENT_ADDON} add-on is not installed on ${clusterName}: Pod Identity associations have no effect without the agent`,
      evidence: { addons },
      fix: {
        summary: `install the ${AGENT_ADDON} add-on (EKS Auto Mode clusters run the agent built in)`,
        commands: [
          `aws eks create-addon --cluster-name ${clusterName} --addon-name ${AGENT_ADDON} --region ${region}`,
        ],
      },
    },
  ]
}
