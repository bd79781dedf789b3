// KMS facts: the keys EC2NodeClasses encrypt EBS volumes with, resolved by DescribeKey (which takes a
// key id, key ARN, alias name or alias ARN alike) and, for customer managed keys, their key policy:
// the policy is what decides who may use a KMS key, IAM policies count only when it lets them.
import type * as kms from '@aws-sdk/client-kms'
import type { Aws } from '../context/aws.js'
import { isNotFound } from '../context/aws.js'
import { parsePolicyDocument } from './policy-document.js'
import { read } from './read.js'
import type { EC2NodeClass, KmsKey } from './types.js'

/** Every distinct `ebs.kmsKeyID` the EC2NodeClasses' blockDeviceMappings name, as written. */
export function kmsKeyIds(nodeClasses: EC2NodeClass[]): string[] {
  const ids = nodeClasses.flatMap((nc) =>
    (nc.spec.blockDeviceMappings ?? []).flatMap((b) => (b.ebs?.kmsKeyID ? [b.ebs.kmsKeyID] : [])),
  )
  return [...new Set(ids)]
}

/** The key an identifier names (null: no such key), with its key policy when it is a customer managed key. */
export async function kmsKey(aws: Aws, id: string): Promise<KmsKey | null> {
  let out: kms.DescribeKeyCommandOutput
  try {
    out = await aws.call<kms.DescribeKeyCommandOutput>('kms', 'DescribeKey', { KeyId: id })
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
  const m = out.KeyMetadata
  if (!m) return null
  const key: KmsKey = {
    arn: m.Arn ?? '',
    keyId: m.KeyId ?? '',
    accountId: m.AWSAccountId ?? '',
    keyManager: m.KeyManager === 'AWS' ? 'AWS' : 'CUSTOMER',
    keyState: m.KeyState ?? (m.Enabled === false ? 'Disabled' : 'Enabled'),
  }
  // An AWS managed key's policy lets every principal of the account use it through EC2: nothing to judge.
  if (key.keyManager === 'AWS') return key
  // By ARN: two spellings of the same key (alias and id) cost one GetKeyPolicy.
  const policy = await read(`kms:GetKeyPolicy ${key.arn}`, async () => {
    const p = await aws.call<kms.GetKeyPolicyCommandOutput>('kms', 'GetKeyPolicy', {
      KeyId: key.arn,
      PolicyName: 'default',
    })
    return parsePolicyDocument(p.Policy ?? '')
  })
  return { ...key, policy }
}
