// Whether a NodePool can launch at all: its EC2NodeClass exists and is Ready. The verdict and its fix
// are doctor's own (check nodeclass-ready), run on the Kubernetes facts this command read.
import { runChecks } from '../checks/run.js'
import { nodeclassReady } from '../checks/nodeclass-ready.js'
import type { Finding } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import type { WhyFacts } from './types.js'

/** doctor's findings by subject (`nodepool/NAME`, `ec2nodeclass/NAME`). */
export function nodeClassFindings(facts: WhyFacts): Map<string, Finding> {
  // nodeclass-ready reads only facts.kube and facts.meta: the rest of doctor's facts is not needed.
  const doctorFacts = {
    schema: 'karpctl.facts/v1',
    meta: { ...facts.meta, partition: 'aws', notes: [] },
    kube: facts.kube,
  } as unknown as Facts
  const out = new Map<string, Finding>()
  for (const r of runChecks([nodeclassReady], doctorFacts))
    for (const f of r.findings) if (f.subject) out.set(f.subject, f)
  return out
}

/**
 * The doctor finding that rules the NodePool out, or undefined when its EC2NodeClass is usable. The
 * EC2NodeClass's own verdict comes first: a NodePool whose EC2NodeClass is not Ready is not Ready
 * either, and its roll-up (`NodeClassNotReady`) names neither the cause nor the fix.
 */
export function nodeClassProblem(
  findings: Map<string, Finding>,
  pool: string,
  nodeClass: string,
): Finding | undefined {
  const nc = findings.get(`ec2nodeclass/${nodeClass}`)
  if (nc && nc.status !== 'pass') return nc
  const np = findings.get(`nodepool/${pool}`)
  if (np && np.status !== 'pass') return np
  return undefined
}
