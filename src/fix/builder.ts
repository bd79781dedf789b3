// What every doctor --fix builder shares: its shape, and the names it derives from the facts.
import { installOf } from '../facts/rendered-install.js'
import type { Finding } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import type { DeploymentRef } from '../plan/resources/restart.js'
import type { Resource } from '../plan/types.js'
import { controllerDeploymentName, controllerNamespace } from '../checks/lib/install.js'
import { fixBlocked, ownership, type Ownership } from '../checks/lib/owners.js'
import { type HelmFixOptions, type ValueEdit } from './helm-values.js'

export interface Built {
  resources: Resource[]
  manual: Finding[]
  /** Repairs in the Helm values: every check's go into one new revision of the release. */
  values?: ValueEdit[]
  /** Why a manual finding is manual, where it is not the check's usual reason (a stack owns the resource). */
  why?: Map<Finding, string>
}
export type Builder = (facts: Facts, failing: Finding[], check: string, opts: FixOptions) => Built
export interface FixOptions extends HelmFixOptions {
  /** Which checks may be fixed (--only / --skip); the others' failures are left alone. */
  selected?: (id: string) => boolean
}
export const arn = (f: Facts, service: string, resource: string, region = f.meta.region) =>
  `arn:${f.meta.partition}:${service}:${region}:${f.meta.accountId ?? ''}:${resource}`
export const group = (check: string) => `fix: ${check}`
export const release = (facts: Facts) => (facts.kube.release.ok ? facts.kube.release.value : null)
/** Why a values repair is left manual on an install Argo CD, Flux or kubectl applied. */
export const NO_RELEASE_WHY =
  'Karpenter has no Helm release here: karpctl does not change objects another tool applied'

/** The install, Helm's or not: for repairs outside the chart's values (an association, a role). */
export const install = (facts: Facts) => installOf(facts.kube)
/** The controller Deployment, restarted after a change its pods read only when they start. */
export const controllerDeployment = (facts: Facts): DeploymentRef => ({
  namespace: controllerNamespace(facts),
  name: controllerDeploymentName(facts),
})

/** Every finding left manual, each for the same reason. */
export const manualAll = (failing: Finding[], why: string): Built => ({
  resources: [],
  manual: failing,
  why: new Map(failing.map((f) => [f, why])),
})
/** Who owns an IAM role (its physical id is its name; the tags are read in case a tool copied them). */
export function roleOwnership(facts: Facts, name: string): Ownership {
  const r = facts.iam.roles[name]
  return ownership(facts, name, r?.ok && r.value ? r.value.role.tags : {})
}
/** Why --fix leaves a role alone (a stack owns it, or its owner is unknown), or null. */
export const roleHeld = (facts: Facts, name: string, what = `role ${name}`) =>
  fixBlocked(roleOwnership(facts, name), what)
/** The finding's message with the stack named, as the manual list shows it. */
export function naming(f: Finding, o: Ownership, verb = 'change it there'): Finding {
  return o.kind === 'stack'
    ? { ...f, message: `${f.message} (managed by CloudFormation stack ${o.owner.stackName}: ${verb})` }
    : f
}
