// The doctor catalog, read top to bottom: the six checks karpctl was founded on, then the rest.
import { clusterAutoscaler } from './cluster-autoscaler.js'
import { controllerPolicy } from './controller-policy.js'
import { controllerReady } from './controller-ready.js'
import { crdConversionWebhook } from './crd-conversion-webhook.js'
import { discoveryTags } from './discovery-tags.js'
import { ebsKmsKey } from './ebs-kms-key.js'
import { helmRegistryAuth } from './helm-registry-auth.js'
import { helmRelease } from './helm-release.js'
import { interruptionQueue } from './interruption-queue.js'
import { interruptionRules } from './interruption-rules.js'
import { irsaTrustPolicy } from './irsa-trust-policy.js'
import { karpenterVersion } from './karpenter-version.js'
import { nodeRole } from './node-role.js'
import { nodeclassReady } from './nodeclass-ready.js'
import { passroleNodeRole } from './passrole-node-role.js'
import { podIdentity } from './pod-identity.js'
import { sgWebhook8443 } from './sg-webhook-8443.js'
import { spotServiceLinkedRole } from './spot-service-linked-role.js'
import { stsRegionalAnnotation } from './sts-regional-annotation.js'
import { tenantIsolation } from './tenant-isolation.js'
import { tolerationValueTypes } from './toleration-value-types.js'
import type { Check } from './types.js'

export const catalog: Check[] = [
  // founding six
  sgWebhook8443,
  discoveryTags,
  irsaTrustPolicy,
  passroleNodeRole,
  stsRegionalAnnotation,
  tolerationValueTypes,
  // identity and IAM
  podIdentity,
  controllerPolicy,
  nodeRole,
  ebsKmsKey,
  spotServiceLinkedRole,
  // interruption handling
  interruptionQueue,
  interruptionRules,
  // the install itself
  karpenterVersion,
  helmRelease,
  crdConversionWebhook,
  controllerReady,
  nodeclassReady,
  clusterAutoscaler,
  tenantIsolation,
  // this machine
  helmRegistryAuth,
]
