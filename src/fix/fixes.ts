// doctor --fix: for each failing finding whose repair is safe to automate, the resources that repair it —
// the same resource kinds, policies and names install uses, never a second copy. Everything else is
// listed as manual, with the commands doctor already prints. The builders live beside this file, one
// per area; this is the catalog of which check has one, and the one place that assembles the plan.
import type { CheckResult, Finding } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import type { Resource } from '../plan/types.js'
import { helmRepair, type ValueEdit } from './helm-values.js'
import { group, release, type Builder, type FixOptions } from './builder.js'
import { sgWebhook, discovery } from './network.js'
import { passRole, irsaTrust, controllerPolicy, nodeRole, spot } from './iam.js'
import { queueFix, rules } from './interruption.js'
import { valueTypes, stsAnnotation, podIdentity } from './controller.js'
export type { FixOptions } from './builder.js'

export interface Manual {
  check: string
  message: string
  why: string
  commands: string[]
  /** The finding's fix another way (without eksctl), listed under its label. */
  alternative?: { label: string; commands: string[] }
}

export interface FixSet {
  resources: Resource[]
  manual: Manual[]
  /** Check ids whose failures the resources repair (re-judged after the apply). */
  touched: string[]
}

/** Checks with an automatic fix; every other failing check is manual. */
const BUILDERS: Record<string, Builder> = {
  'sg-webhook-8443': sgWebhook,
  'discovery-tags': discovery,
  'passrole-node-role': passRole,
  'irsa-trust-policy': irsaTrust,
  'sts-regional-annotation': stsAnnotation,
  'toleration-value-types': valueTypes,
  'controller-policy': controllerPolicy,
  'spot-service-linked-role': spot,
  'interruption-queue': queueFix,
  'interruption-rules': rules,
  'node-role': nodeRole,
  'pod-identity': podIdentity,
}

const WHY_MANUAL: Record<string, string> = {
  'helm-release': 'a Helm release needs a decision (roll back, or upgrade with corrected values)',
  'karpenter-version': 'an upgrade of Karpenter is a planned change, not a repair',
  'toleration-value-types': 'the value is not in your Helm values (a chart default): set it in your values',
  'tenant-isolation': "a tenant's NodePool is that tenant's design",
  'ebs-kms-key': "a KMS key policy is its owner's: apply the statements there, or run the command (below)",
  'controller-policy':
    'an explicit Deny, a permissions boundary or the stack that manages the role decides: change it there (below)',
}

/** Why a check said its finding's fix is manual, in the finding's data (`evidence.manualBecause`). */
function manualBecause(f: Finding): string | undefined {
  const why = f.evidence?.manualBecause
  return typeof why === 'string' ? why : undefined
}

export function fixSet(facts: Facts, results: CheckResult[], opts: FixOptions = {}): FixSet {
  const out: FixSet = { resources: [], manual: [], touched: [] }
  const edits: { check: string; edit: ValueEdit }[] = []
  for (const r of results) {
    const failing = r.findings.filter((f) => f.status === 'fail')
    if (failing.length === 0 || (opts.selected && !opts.selected(r.meta.id))) continue
    const build = BUILDERS[r.meta.id]
    const built = build ? build(facts, failing, r.meta.id, opts) : { resources: [], manual: failing }
    const fresh = built.resources.filter((x) => !out.resources.some((y) => y.address === x.address))
    if (built.resources.length || built.values?.length) out.touched.push(r.meta.id)
    out.resources.push(...fresh)
    edits.push(...(built.values ?? []).map((edit) => ({ check: r.meta.id, edit })))
    for (const f of built.manual)
      out.manual.push({
        check: r.meta.id,
        message: f.message,
        why: built.why?.get(f) ?? manualBecause(f) ?? WHY_MANUAL[r.meta.id] ?? 'needs a human decision',
        commands: f.fix?.commands ?? [],
        ...(f.fix?.alternative ? { alternative: f.fix.alternative } : {}),
      })
  }
  const rel = release(facts)
  if (rel && edits.length) {
    const checks = [...new Set(edits.map((e) => e.check))]
    out.resources.push(
      helmRepair(
        rel,
        edits.map((e) => e.edit),
        opts,
        group(checks.join(', ')),
      ),
    )
    // A failed release is still a human's call, but the repair's new revision may settle it: say so,
    // and judge it again after the apply.
    for (const m of out.manual.filter((x) => x.check === 'helm-release'))
      m.why = `${m.why}; the Helm repair in this plan makes a new revision, which settles it if it deploys`
    if (out.manual.some((x) => x.check === 'helm-release')) out.touched.push('helm-release')
  }
  return out
}
