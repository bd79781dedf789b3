// Repairs of the controller's Helm values and identity: value types, the STS annotation, Pod Identity.
import { serviceAccountAnnotation } from '../plan/resources/sa-annotation.js'
import { podIdentityAssociation } from '../plan/resources/eks-access.js'
import { controllerServiceAccount } from '../checks/lib/trust.js'
import { ownershipTags } from '../desired/install.js'
import { valueTypeEdits } from './helm-values.js'
import type { Finding } from '../checks/types.js'
import { Builder, arn, group, install, release, controllerDeployment } from './builder.js'

/** Toleration, annotation and label values that are not strings: set as strings in the one Helm repair. */
export const valueTypes: Builder = (facts, failing) => {
  const r = release(facts)
  const values = r ? valueTypeEdits(r, failing) : []
  const covered = new Set(values.map((e) => e.finding))
  return { resources: [], manual: failing.filter((f) => !covered.has(f)), values }
}
/** A boolean in the values goes through Helm; a missing live annotation Helm does not manage, kubectl. */
export const stsAnnotation: Builder = (facts, failing, check, opts) => {
  const typed = valueTypes(facts, failing, check, opts)
  const sa = facts.kube.serviceAccount.ok ? facts.kube.serviceAccount.value : null
  // Helm manages it when the release renders it: the managed-by label outlives serviceAccount.create=false.
  const helmManaged = release(facts)?.renderedServiceAccount !== undefined
  const missingLive = typed.manual.filter((f) => f.code === 'missing-on-live')
  if (!sa || helmManaged || missingLive.length === 0) return typed
  return {
    ...typed,
    resources: [
      serviceAccountAnnotation({
        namespace: sa.metadata.namespace ?? 'kube-system',
        name: sa.metadata.name,
        key: 'eks.amazonaws.com/sts-regional-endpoints',
        value: 'true',
        group: group(check),
        // EKS's pod identity webhook reads the annotation when a pod is created.
        restart: controllerDeployment(facts),
      }),
    ],
    manual: typed.manual.filter((f) => !missingLive.includes(f)),
  }
}
/** No association for the controller's ServiceAccount: one, to the controller role, then a restart. */
export const podIdentity: Builder = (facts, failing, check) => {
  // An association is AWS's, not the chart's: made for an install with no Helm release too.
  const r = install(facts)
  // The role the finding proved (the controller role read, or the near-miss association's): never a guess.
  const roleOf = (f: Finding) => (f.evidence as { roleArn?: unknown } | undefined)?.roleArn
  const missing = failing.filter((f) => f.code === 'no-association' && typeof roleOf(f) === 'string')
  if (!r || missing.length === 0) return { resources: [], manual: failing }
  const roleArn = roleOf(missing[0]!) as string
  const sa = controllerServiceAccount(facts, r)
  const tags = ownershipTags(facts.meta.clusterName)
  return {
    resources: [
      {
        ...podIdentityAssociation({
          clusterName: facts.meta.clusterName,
          clusterArn: arn(facts, 'eks', `cluster/${facts.meta.clusterName}`),
          namespace: sa.namespace,
          serviceAccount: sa.name,
          roleArn,
          tags,
          ownership: tags,
          adopt: false,
          dependsOn: [],
          restart: controllerDeployment(facts),
        }),
        group: group(check),
      },
    ],
    manual: failing.filter((f) => !missing.includes(f)),
  }
}
