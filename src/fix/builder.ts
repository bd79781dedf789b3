// What every doctor --fix builder shares: its shape, and the names it derives from the facts.
import type { Finding } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import type { DeploymentRef } from '../plan/resources/restart.js'
import type { Resource } from '../plan/types.js'
import { controllerDeploymentName, controllerNamespace } from '../checks/lib/install.js'
import { type HelmFixOptions, type ValueEdit } from './helm-values.js'

export interface Built {
  resources: Resource[]
  manual: Finding[]
  /** Repairs in the Helm values: every check's go into one new revision of the release. */
  values?: ValueEdit[]
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
/** The controller Deployment, restarted after a change its pods read only when they start. */
export const controllerDeployment = (facts: Facts): DeploymentRef => ({
  namespace: controllerNamespace(facts),
  name: controllerDeploymentName(facts),
})
