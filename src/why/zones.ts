// Zones: the zones a pod may land in (its nodeSelector, affinity and bound volumes, with the
// NodePool's zone requirement) against the zones of the EC2NodeClass's subnets, where Karpenter can
// launch at all.
import type { Fix } from '../checks/types.js'
import { shellQuote } from '../checks/lib/facts.js'
import { ZONE_LABEL } from './pod.js'
import { describe, intersect, size, type Requirements } from './requirements.js'
import type { EC2NodeClass } from '../facts/types.js'
import { tagSubnetsFix } from './subnets.js'
import type { WhyFacts } from './types.js'

export interface ZoneVerdict {
  message: string
  fix: Fix
}

/** Undefined when a zone is left, or when the EC2NodeClass does not list its subnets (not judged then). */
export function judgeZones(
  merged: Requirements,
  nodeClass: EC2NodeClass | undefined,
  facts?: WhyFacts,
): ZoneVerdict | undefined {
  const subnets = nodeClass?.status?.subnets
  const wanted = merged.byKey.get(ZONE_LABEL)
  if (!nodeClass || !subnets || subnets.length === 0 || !wanted) return undefined
  const zones = [...new Set(subnets.map((s) => s.zone))].sort()
  const left = intersect(wanted, { key: ZONE_LABEL, complement: false, values: zones })
  if (size(left) > 0) return undefined
  const origin = merged.origin.get(ZONE_LABEL)
  const from = origin?.kind === 'volume' ? ` (volume ${origin.name})` : ''
  const name = nodeClass.metadata.name
  const missing = wanted.complement ? [] : wanted.values
  const message = `no subnet in the zone: the pod needs ${describe(wanted)}${from}, EC2NodeClass ${name} has subnets in [${zones.join(' ')}] only`
  const tagged =
    facts &&
    tagSubnetsFix(facts, nodeClass, (z) => wanted.values.includes(z) !== wanted.complement, {
      one: true,
      because: 'a node for the pod can then launch in its zone',
    })
  if (tagged) return { message, fix: tagged }
  return {
    message,
    fix: {
      summary: `give EC2NodeClass ${name} a subnet in ${missing.join(' or ') || 'an allowed zone'}: tag one so its spec.subnetSelectorTerms select it`,
      commands: [
        `kubectl get ec2nodeclass ${shellQuote(name)} -o jsonpath='{.spec.subnetSelectorTerms}'`,
        ...(missing[0]
          ? [
              `aws ec2 describe-subnets --filters Name=availability-zone,Values=${shellQuote(missing[0])} --query 'Subnets[].[SubnetId,VpcId,Tags]'`,
            ]
          : []),
      ],
    },
  }
}
