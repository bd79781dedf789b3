// Trust policies karpctl writes: each names exactly one principal, with StringEquals on exact subjects.
import type { PolicyDocument } from '../policy/types.js'

export const urlSuffix = (partition: string) =>
  partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com'

/** Node role: only EC2 may assume it. */
export function nodeTrust(partition: string): PolicyDocument {
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { Service: `ec2.${urlSuffix(partition)}` }, Action: 'sts:AssumeRole' },
    ],
  }
}

/** IRSA: the cluster's OIDC provider, for exactly one ServiceAccount, audience STS. */
export function irsaTrust(
  oidcProviderArn: string,
  issuer: string,
  namespace: string,
  sa: string,
): PolicyDocument {
  const host = issuer.replace(/^https:\/\//, '')
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Federated: oidcProviderArn },
        Action: 'sts:AssumeRoleWithWebIdentity',
        Condition: {
          StringEquals: {
            [`${host}:aud`]: 'sts.amazonaws.com',
            [`${host}:sub`]: `system:serviceaccount:${namespace}:${sa}`,
          },
        },
      },
    ],
  }
}

/** EKS Pod Identity: the agent assumes the role and tags the session (which the association scopes). */
export function podIdentityTrust(): PolicyDocument {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowEksAuthToAssumeRoleForPodIdentity',
        Effect: 'Allow',
        Principal: { Service: 'pods.eks.amazonaws.com' },
        Action: ['sts:AssumeRole', 'sts:TagSession'],
      },
    ],
  }
}
