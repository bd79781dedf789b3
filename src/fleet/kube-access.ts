// How a fleet run reaches one cluster's Kubernetes API: its EKS endpoint and CA from DescribeCluster and
// a bearer token made in memory (token.ts) from the same credentials that listed it — or, with
// --kubeconfig-contexts, the user's kubeconfig context named by the cluster's ARN (as `aws eks
// update-kubeconfig` names them) when there is one: a tunnel or proxy to a private endpoint.
import type * as eks from '@aws-sdk/client-eks'
import { createSecureContext, type SecureContext } from 'node:tls'
import type { Aws } from '../context/aws.js'
import type { KubeCredentials, KubeRequestOptions } from '../context/kubeconfig.js'
import { EnvironmentError, KarpctlError } from '../errors.js'
import { eksToken } from './token.js'
import type { FleetCluster } from './types.js'

/** EKS accepts a token for 15 minutes; one is made again well before that. */
const TOKEN_REUSE_MS = 10 * 60_000

export interface ClusterAccess {
  creds: KubeCredentials
  via: 'eks-token' | 'kube-context'
  /** EKS says the endpoint is private only: a failure to reach it says so. */
  privateEndpoint?: boolean
}

export async function clusterAccess(
  cluster: FleetCluster,
  aws: Aws,
  useKubeContexts: boolean,
  clock: () => Date = () => new Date(),
): Promise<ClusterAccess> {
  if (useKubeContexts) {
    const { resolveKubeCredentials } = await import('../context/kubeconfig.js')
    try {
      return { creds: await resolveKubeCredentials(cluster.arn), via: 'kube-context' }
    } catch (err) {
      // No context of that name: an EKS token then. Any other kubeconfig problem is the user's to fix.
      if (!(err instanceof KarpctlError && err.code === 'UNKNOWN_KUBE_CONTEXT')) throw err
    }
  }
  const out = await aws.call<eks.DescribeClusterCommandOutput>('eks', 'DescribeCluster', {
    name: cluster.name,
  })
  const c = out.cluster
  if (!c?.endpoint)
    throw new EnvironmentError(
      `EKS reports no API endpoint for cluster ${cluster.name} (status ${c?.status ?? 'unknown'}): doctor it once it is ACTIVE`,
      'NO_CLUSTER_ENDPOINT',
    )
  const ca = c.certificateAuthority?.data ? Buffer.from(c.certificateAuthority.data, 'base64') : undefined
  let secureContext: SecureContext | undefined
  try {
    secureContext = ca ? createSecureContext({ ca }) : undefined
  } catch {
    // A CA Node cannot parse: left to each request, which reports it as a TLS failure.
  }
  let token: { at: number; value: Promise<string> } | undefined
  const requestOptions = async (): Promise<KubeRequestOptions> => {
    const now = clock().getTime()
    if (!token || now - token.at > TOKEN_REUSE_MS) {
      const value = aws.credentialIdentity().then((id) => eksToken(cluster.name, cluster.region, id, clock()))
      token = { at: now, value }
      value.catch(() => (token = undefined))
    }
    const bearer = await token.value
    return {
      headers: { Authorization: `Bearer ${bearer}` },
      ...(ca ? { ca } : {}),
      ...(secureContext ? { secureContext } : {}),
      rejectUnauthorized: true,
    }
  }
  const { KubeConfig } = await import('@kubernetes/client-node')
  const config = new KubeConfig()
  // The same cluster as a kubeconfig (no user secret in it): what kube-target and messages read.
  config.loadFromOptions({
    clusters: [{ name: cluster.arn, server: c.endpoint, skipTLSVerify: false }],
    users: [{ name: cluster.arn }],
    contexts: [{ name: cluster.arn, cluster: cluster.arn, user: cluster.arn }],
    currentContext: cluster.arn,
  })
  return {
    creds: {
      server: c.endpoint.replace(/\/$/, ''),
      contextName: cluster.arn,
      eks: { cluster: cluster.name, region: cluster.region },
      config,
      requestOptions,
    },
    via: 'eks-token',
    privateEndpoint: c.resourcesVpcConfig?.endpointPublicAccess === false,
  }
}
