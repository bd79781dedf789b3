// Why a launched instance never joined, or why a launch failed: doctor's own checks over doctor's
// facts (collected through the same memoized context), in the order the causes are most often true
// — the node role's cluster access and policies (node-role), the EC2NodeClass's state
// (nodeclass-ready), its subnets and security groups (discovery-tags) — then the instance's boot log.
import { runCheck } from '../../checks/run.js'
import type { Check } from '../../checks/types.js'
import type { Read } from '../../facts/types.js'
import type { Facts } from '../../facts/types.js'
import type { BootLog } from './types.js'
import type { JoinCause } from './verdict.js'

/** The doctor checks that speak to a node that launched and never registered, most often true first. */
export const JOIN_CHECKS = ['node-role', 'nodeclass-ready', 'discovery-tags']

export function doctorCauses(
  catalog: Check[],
  facts: Facts | undefined,
  ids: string[],
  unread?: string,
): JoinCause[] {
  if (!facts)
    return [
      {
        source: 'doctor',
        status: 'unknown',
        message: `doctor's facts were not collected${unread ? ` (${unread})` : ''}: run \`karpctl doctor --only ${ids.join(',')}\``,
      },
    ]
  const out: JoinCause[] = []
  for (const id of ids) {
    const check = catalog.find((c) => c.meta.id === id)
    if (!check) continue
    const result = runCheck(check, facts)
    const bad = result.findings.filter((f) => f.status !== 'pass' && f.status !== 'skipped')
    if (!bad.length)
      out.push({
        source: id,
        status: result.status,
        message: `${check.meta.title}: ${result.status === 'pass' ? 'passes' : 'nothing to check'}`,
      })
    for (const f of bad)
      out.push({ source: id, status: f.status, message: f.message, ...(f.fix ? { fix: f.fix } : {}) })
  }
  return out
}

/** What the kubelet and nodeadm said at boot, read from the instance's console output. */
export function bootCause(log: Read<BootLog> | undefined): JoinCause {
  if (!log)
    return {
      source: 'boot-log',
      status: 'unknown',
      message:
        'the boot log was not read (the NodeClaim has no instance ID yet, or the snapshot was saved without it)',
    }
  if (!log.ok)
    return {
      source: 'boot-log',
      status: 'unknown',
      message: `the boot log could not be read (${log.error.read}: ${log.error.message}); it needs ec2:GetConsoleOutput`,
    }
  if (!log.value.lines.length)
    return {
      source: 'boot-log',
      status: 'info',
      message: `the boot log of ${log.value.instanceId} has no kubelet or nodeadm error (it may be empty for a few minutes after launch)`,
    }
  return {
    source: 'boot-log',
    status: 'fail',
    message: `the boot log of ${log.value.instanceId} says: ${log.value.lines.slice(0, 5).join(' | ')}`,
  }
}

const BOOT_ERRORS =
  /(kubelet|nodeadm|bootstrap|cloud-init).*(error|fail|unauthori[sz]ed|forbidden|denied|timeout|timed out|refused|x509|no such file)|(error|failed).*(kubelet|nodeadm|eks|api server|apiserver)/i

/** The lines of a console output that name a kubelet, nodeadm or bootstrap failure (at most 20). */
export function pickBootErrors(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => BOOT_ERRORS.test(l))
    .slice(-20)
}
