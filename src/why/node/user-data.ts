// The EC2NodeClass's AMI family against its userData and its AMIs, as Karpenter v1.14.1's provider
// builds the instance's user data (pkg/providers/amifamily/bootstrap):
// - AL2 (eksbootstrap.go): a userData that is not MIME is wrapped as a shell script, then Karpenter's
//   own `/etc/eks/bootstrap.sh` part follows; a nodeadm NodeConfig there is run as a script and never applies.
// - AL2023 (nodeadm.go): a userData that is not MIME becomes a NodeConfig part when it parses as a YAML
//   map, else a shell script; nodeadm fails on a YAML map that is no NodeConfig (a `#cloud-config`),
//   and AL2023 has no `/etc/eks/bootstrap.sh` for a script to call.
// - Bottlerocket (bottlerocket.go): the userData must be TOML; Karpenter merges its settings into it and
//   fails the launch ("invalid UserData") when it cannot parse it.
// - Custom: the userData is the whole of it; Karpenter adds nothing that joins the node.
import { shellQuote } from '../../checks/lib/facts.js'
import type { EC2NodeClass } from '../../facts/types.js'
import type { JoinCause } from './verdict.js'

/** Karpenter's launch error when it cannot merge the userData ("invalid UserData", "parsing custom UserData"). */
export const USER_DATA_ERROR = /user ?data/i

type Family = 'AL2' | 'AL2023' | 'Bottlerocket' | 'Windows' | 'Custom'

const ALIAS: Record<string, Family> = {
  al2: 'AL2',
  al2023: 'AL2023',
  bottlerocket: 'Bottlerocket',
  windows2019: 'Windows',
  windows2022: 'Windows',
  windows2025: 'Windows',
}

/** The family Karpenter builds user data for: an `alias` term's, else `spec.amiFamily`. */
export function amiFamilyOf(nc: EC2NodeClass): Family | undefined {
  const alias = nc.spec.amiSelectorTerms?.find((t) => t.alias)?.alias
  if (alias) return ALIAS[alias.split('@')[0]?.toLowerCase() ?? '']
  const f = nc.spec.amiFamily
  if (!f) return undefined
  return f.startsWith('Windows')
    ? 'Windows'
    : (['AL2', 'AL2023', 'Bottlerocket', 'Custom'] as const).find((x) => x === f)
}

/** The family an EKS-optimized AMI's name says it is (Amazon's naming), or undefined for other names. */
export function familyOfAmiName(name: string): Family | undefined {
  if (/^bottlerocket-/i.test(name)) return 'Bottlerocket'
  if (/^amazon-eks-node-al2023-/i.test(name)) return 'AL2023'
  if (/^amazon-eks-(gpu-|arm64-)?node-1\.\d+-v/i.test(name)) return 'AL2'
  if (/^Windows_Server-/i.test(name)) return 'Windows'
  return undefined
}

const isMime = (s: string) => /^(MIME-Version:|Content-Type:)/i.test(s.trimStart())

/** A YAML mapping's top-level key line (`key: value` / `key:`), which a shell script or TOML has not. */
const YAML_KEY = /^[A-Za-z_][\w.-]*:(\s|$)/m
/** A TOML table header or `key = value` line. */
const TOML_LINE = /^\s*(\[[^\]]+\]|[\w".-]+\s*=)/

/** What the userData reads as, roughly as the provider would tell: enough to name a mismatch. */
export function userDataKind(text: string): 'mime' | 'shell' | 'nodeconfig' | 'yaml' | 'toml' | 'other' {
  const t = text.trimStart()
  if (isMime(t)) return 'mime'
  if (t.startsWith('#!')) return 'shell'
  if (/^\s*kind:\s*NodeConfig\b/m.test(t) && /^\s*apiVersion:\s*node\.eks\.aws\//m.test(t))
    return 'nodeconfig'
  const lines = t.split(/\r?\n/).filter((l) => l.trim() && !l.trim().startsWith('#'))
  if (lines.length && lines.every((l) => TOML_LINE.test(l) || /^\s*[\]"'},\d-]/.test(l))) return 'toml'
  if (YAML_KEY.test(t)) return 'yaml'
  return 'other'
}

const patch = (nc: EC2NodeClass, body: string) =>
  `kubectl patch ec2nodeclass ${shellQuote(nc.metadata.name)} --type merge -p ${shellQuote(body)}`

function mismatch(nc: EC2NodeClass, family: Family, shape: UserDataShape): JoinCause | undefined {
  const { kind, callsBootstrapSh } = shape
  const where = `EC2NodeClass ${nc.metadata.name} (${family}) spec.userData`
  const drop = {
    summary: `make spec.userData fit ${family}, or remove it`,
    commands: [patch(nc, '{"spec":{"userData":null}}')],
  }
  if (family === 'Bottlerocket' && kind !== 'toml')
    return {
      source: 'user-data',
      status: 'fail',
      message: `${where} is not TOML (it reads as ${kind === 'other' ? 'plain text' : kind}): Karpenter merges its settings into it as TOML and fails the launch ("invalid UserData"); Bottlerocket takes TOML settings only`,
      fix: drop,
    }
  if (family === 'AL2023' && kind === 'yaml')
    return {
      source: 'user-data',
      status: 'fail',
      message: `${where} is a YAML map but no nodeadm NodeConfig (apiVersion node.eks.aws/…, kind NodeConfig): Karpenter hands it to nodeadm as a NodeConfig part, nodeadm cannot read it and the kubelet is never started`,
      fix: drop,
    }
  if (family === 'AL2023' && callsBootstrapSh)
    return {
      source: 'user-data',
      status: 'warn',
      message: `${where} calls /etc/eks/bootstrap.sh, which AL2023 does not have (nodeadm joins it): the script fails at boot and what it passes to the kubelet never applies; set those in a NodeConfig part`,
      fix: drop,
    }
  if (family === 'AL2' && kind === 'nodeconfig')
    return {
      source: 'user-data',
      status: 'warn',
      message: `${where} is a nodeadm NodeConfig, which AL2 has no nodeadm to read: Karpenter wraps it as a shell script before its own bootstrap.sh, so none of its settings apply`,
      fix: drop,
    }
  return undefined
}

/**
 * What a snapshot keeps of a userData: its kind and whether it calls bootstrap.sh, never its text
 * (free text a snapshot leaves out: src/facts/free-text.ts). null: the EC2NodeClass has none.
 */
export interface UserDataShape {
  kind: ReturnType<typeof userDataKind>
  callsBootstrapSh: boolean
}

export function userDataShape(text: string | undefined): UserDataShape | null {
  if (!text?.trim()) return null
  return { kind: userDataKind(text), callsBootstrapSh: /\/etc\/eks\/bootstrap\.sh/.test(text) }
}

/**
 * The AMI family against the userData and the AMIs the EC2NodeClass resolved. `shape` undefined: the
 * userData's shape is not known (a snapshot saved before karpctl kept it).
 */
export function userDataCauses(
  nc: EC2NodeClass | undefined,
  shape: UserDataShape | null | undefined,
): JoinCause[] {
  if (!nc)
    return [
      {
        source: 'user-data',
        status: 'unknown',
        message: 'the NodeClaim names no EC2NodeClass that was read',
      },
    ]
  const family = amiFamilyOf(nc)
  if (!family)
    return [
      {
        source: 'user-data',
        status: 'unknown',
        message: `EC2NodeClass ${nc.metadata.name} names no AMI family karpctl knows (spec.amiFamily ${nc.spec.amiFamily ?? 'unset'}, no alias term)`,
      },
    ]
  const out: JoinCause[] = []
  if (shape === undefined)
    out.push({
      source: 'user-data',
      status: 'unknown',
      message: `the shape of EC2NodeClass ${nc.metadata.name}'s userData was not saved in this snapshot`,
    })
  if (family === 'Custom' && shape === null)
    out.push({
      source: 'user-data',
      status: 'fail',
      message: `EC2NodeClass ${nc.metadata.name} is amiFamily Custom with no spec.userData: Karpenter adds no bootstrap for Custom, so nothing joins the instance to the cluster`,
    })
  const bad = shape ? mismatch(nc, family, shape) : undefined
  if (bad) out.push(bad)
  if (!nc.spec.amiSelectorTerms?.some((t) => t.alias))
    for (const ami of nc.status?.amis ?? []) {
      const said = ami.name ? familyOfAmiName(ami.name) : undefined
      if (said && family !== 'Custom' && said !== family) {
        out.push({
          source: 'user-data',
          status: 'fail',
          message: `EC2NodeClass ${nc.metadata.name} builds ${family} user data, but its AMI ${ami.id} (${ami.name}) is ${said}: the AMI cannot read it (${said === 'AL2' ? "cloud-init skips nodeadm's application/node.eks.aws part" : 'its bootstrap never gets its settings'}) and the node never joins`,
          fix: {
            summary: `set spec.amiFamily to ${said}, or select ${family} AMIs (an alias term picks the right ones)`,
            commands: [patch(nc, JSON.stringify({ spec: { amiFamily: said } }))],
          },
        })
        break
      }
    }
  if (!out.length)
    out.push({
      source: 'user-data',
      status: 'pass',
      message: `EC2NodeClass ${nc.metadata.name}: the userData (${shape ? shape.kind : 'none'}) and the AMIs fit ${family}`,
    })
  return out
}
