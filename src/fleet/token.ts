// The bearer token `aws eks get-token` prints, made in memory: a presigned STS GetCallerIdentity URL whose
// signature covers the `x-k8s-aws-id` header (the cluster name), base64url without padding, prefixed
// `k8s-aws-v1.`. The EKS API server (aws-iam-authenticator) replays the URL to STS to learn who the caller
// is; nothing is sent to STS here, and no kubeconfig or token file is written.
import { createHash, createHmac } from 'node:crypto'
import type { SignatureV4 as SignatureV4Type } from '@smithy/signature-v4'

export interface AwsCredentialIdentity {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
}

export const TOKEN_PREFIX = 'k8s-aws-v1.'
/** aws-iam-authenticator accepts a presigned URL valid at most 15 minutes; the CLI asks for 60 s. */
export const TOKEN_EXPIRES_S = 60
const CLUSTER_HEADER = 'x-k8s-aws-id'

/** SHA-256 (and HMAC-SHA-256 with a secret) on node:crypto, in the shape the SDK's signer takes. */
type SourceData = string | ArrayBuffer | ArrayBufferView

const bytes = (d: SourceData): string | Uint8Array =>
  typeof d === 'string'
    ? d
    : ArrayBuffer.isView(d)
      ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength)
      : new Uint8Array(d)

class NodeSha256 {
  private readonly hash
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret))
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data))
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()))
  }
}

/** The STS host the token names: the regional endpoint, as `aws eks get-token` uses today. */
export function stsHost(region: string): string {
  return `sts.${region}.amazonaws.${region.startsWith('cn-') ? 'com.cn' : 'com'}`
}

/** The presigned GetCallerIdentity URL for a cluster, signed with the given credentials at `now`. */
export async function presignedIdentityUrl(
  clusterName: string,
  region: string,
  credentials: AwsCredentialIdentity,
  now: Date = new Date(),
): Promise<string> {
  const { SignatureV4 } = (await import('@smithy/signature-v4')) as { SignatureV4: typeof SignatureV4Type }
  const signer = new SignatureV4({ credentials, region, service: 'sts', sha256: NodeSha256 })
  const host = stsHost(region)
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname: host,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host, [CLUSTER_HEADER]: clusterName },
    },
    { expiresIn: TOKEN_EXPIRES_S, signingDate: now },
  )
  const query = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&')
  return `https://${host}/?${query}`
}

/** The token itself: what `aws eks get-token --cluster-name <name>` puts in `status.token`. */
export async function eksToken(
  clusterName: string,
  region: string,
  credentials: AwsCredentialIdentity,
  now: Date = new Date(),
): Promise<string> {
  const url = await presignedIdentityUrl(clusterName, region, credentials, now)
  return TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url')
}
