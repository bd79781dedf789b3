// The Karpenter controller's reference IAM policies of each version, read from the upstream
// getting-started templates as data (src/desired/reference-policies.generated.ts), never copied by hand:
// install writes the newest, doctor compares an install with its own version's, upgrade adds the
// difference between two versions.
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'
import { REFERENCE_STATEMENTS, REFERENCE_VERSIONS } from './reference-policies.generated.js'
import { cmpVersion, type KarpenterVersion, parseVersion } from './version.js'

export interface ReferenceParams {
  partition: string
  region: string
  accountId: string
  clusterName: string
  /** Node roles the controller may pass to EC2 (default role + one per tenant). */
  nodeRoleArns: string[]
  queueArn: string
}

export interface NamedPolicy {
  /** CloudFormation logical id, e.g. NodeLifecyclePolicy. */
  key: string
  name: string
  document: PolicyDocument
}

/** Orders two version strings; throws on one that is not a version (callers hold parsed ones). */
export const compareVersions = (a: string, b: string): number => {
  const [x, y] = [parseVersion(a), parseVersion(b)]
  if (!x || !y) throw new Error(`not a version: ${x ? b : a}`)
  return cmpVersion(x, y)
}

/** The versions whose reference karpctl holds (the last patch of each minor), oldest first. */
export const REFERENCE_VERSION_LIST: readonly string[] = REFERENCE_VERSIONS.map((v) => v.version)
export const NEWEST_REFERENCE = REFERENCE_VERSION_LIST[REFERENCE_VERSION_LIST.length - 1] as string

export interface ReferenceChoice {
  /** The template version used: the same minor's last patch. */
  version: string
  /** The installed version is newer than every template karpctl holds: the newest stands in for it. */
  newer: boolean
}

/**
 * The reference that describes `version`: its own minor's template (policies change only between
 * minors), or the newest when the version is newer than all of them; null for a version before 1.0
 * (pre-v1 Karpenter has another policy, another API: no template, older than the newest) or not a version.
 */
export function referenceFor(version: string): ReferenceChoice | null {
  const v = parseVersion(version.trim())
  if (!v) return null
  const sameMinor = REFERENCE_VERSION_LIST.find((r) => {
    const { major, minor } = parseVersion(r) as KarpenterVersion
    return major === v.major && minor === v.minor
  })
  if (sameMinor) return { version: sameMinor, newer: false }
  if (compareVersions(version, NEWEST_REFERENCE) > 0) return { version: NEWEST_REFERENCE, newer: true }
  return null
}

const entry = (version: string) => {
  const e = REFERENCE_VERSIONS.find((v) => v.version === version)
  if (!e) throw new Error(`no reference policy for Karpenter ${version}`)
  return e
}

/** Fills a template text's `!Sub` placeholders; the node role ARN may become a list. */
function substitute(text: string, p: ReferenceParams): string {
  const passRoles = p.nodeRoleArns.length === 1 ? p.nodeRoleArns[0] : p.nodeRoleArns
  return text
    .replaceAll('"${KarpenterNodeRole.Arn}"', JSON.stringify(passRoles))
    .replaceAll('${AWS::Partition}', p.partition)
    .replaceAll('${AWS::Region}', p.region)
    .replaceAll('${AWS::AccountId}', p.accountId)
    .replaceAll('${ClusterName}', p.clusterName)
    .replaceAll('${KarpenterInterruptionQueue.Arn}', p.queueArn)
}

const statement = (index: number, p: ReferenceParams): PolicyStatement =>
  JSON.parse(substitute(REFERENCE_STATEMENTS[index] as string, p)) as PolicyStatement

/** The controller's managed policies as the template of `version` (a held reference version) writes them. */
export function referencePolicies(version: string, p: ReferenceParams): NamedPolicy[] {
  return entry(version).policies.map((policy) => ({
    key: policy.key,
    name: substitute(policy.name, p),
    document: { Version: '2012-10-17', Statement: policy.statements.map((i) => statement(i, p)) },
  }))
}

/** The node role's managed policy names in the template of `version`. */
export const referenceNodePolicies = (version: string): readonly string[] => entry(version).nodePolicies

export interface ReferenceRule {
  /** CloudFormation logical id, e.g. SpotInterruptionRule. */
  key: string
  source: string
  detailType: string
}

/** The EventBridge rules that feed the interruption queue in the template of `version`. */
export const referenceRules = (version: string): readonly ReferenceRule[] => entry(version).rules

const statementIds = (version: string) => entry(version).policies.flatMap((p) => p.statements)
const sidOf = (index: number) => (JSON.parse(REFERENCE_STATEMENTS[index] as string) as PolicyStatement).Sid

export interface ReferenceDelta {
  /** Statements `to` has that `from` lacks, or has with another body (same Sid): what an upgrade adds. */
  added: PolicyStatement[]
  /** Sids of statements only `from` has: the old version needed them, the new one does not. */
  removed: string[]
}

/** What the controller's policy gains and loses from one reference version to another. */
export function referenceDelta(from: string, to: string, p: ReferenceParams): ReferenceDelta {
  const before = new Set(statementIds(from))
  const after = statementIds(to)
  const afterSids = new Set(after.map(sidOf))
  return {
    added: after.filter((i) => !before.has(i)).map((i) => statement(i, p)),
    removed: [...before]
      .map(sidOf)
      .filter((sid): sid is string => sid !== undefined && !afterSids.has(sid))
      .sort(),
  }
}
