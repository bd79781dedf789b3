// Karpenter's CRDs convert v1beta1 through a webhook on the 1.0.x controller's service (port 8443).
// From 1.1 the controller serves no webhook and its chart's CRDs have none; but Helm's adoption of CRDs
// the 1.0.x chart's crds/ folder made keeps the field, so an upgraded getting-started install can keep a
// conversion webhook that nothing answers (issue 33). Every request that needs a conversion then fails
// ("conversion webhook ... connection refused"), and so does `kubectl get` of those objects.
import type { CustomResourceDefinition, ServicePorts } from '../facts/types.js'
import { need, shellQuote, skip } from './lib/facts.js'
import { NO_CONVERSION_PATCH } from './lib/install.js'
import type { Check, Finding } from './types.js'

/** Why the service named no longer serves the webhook; null when it does (has the port). */
function gap(c: CustomResourceDefinition, svc: ServicePorts | null | undefined): string | null {
  const s = c.conversion?.service
  if (!s) return null
  const where = `${s.namespace}/${s.name}`
  if (!svc) return `its Service ${where} does not exist`
  if (!svc.ports.some((p) => p.port === s.port))
    return `its Service ${where} serves no port ${s.port} (ports: ${svc.ports.map((p) => p.port).join(', ') || 'none'})`
  return null
}

export const crdConversionWebhook: Check = {
  meta: {
    id: 'crd-conversion-webhook',
    title: "Karpenter's CRDs convert through no webhook that is gone",
    category: 'cluster',
    severity: 'error',
    docs: "A CRD conversion webhook (Karpenter 1.0.x's, on the controller's Service port 8443) must be served by its Service; from 1.1 Karpenter serves none and its chart's CRDs have no conversion: a webhook left behind (Helm's adoption keeps it) makes every converting request fail. The fix sets the API server's default, strategy None, as the chart's CRDs have.",
  },
  run(facts) {
    const crds = need(facts.kube.crds)
    if (!crds.length) skip('no Karpenter CRD found in the cluster')
    const hooked = crds.filter((c) => c.conversion)
    if (!hooked.length)
      return [
        { status: 'pass', message: `none of Karpenter's ${crds.length} CRDs converts through a webhook` },
      ]
    const read = facts.kube.conversionServices
    const findings: Finding[] = []
    for (const c of hooked) {
      const s = c.conversion?.service
      if (!s) {
        findings.push({
          status: 'unknown',
          subject: c.name,
          message: `${c.name} converts through a webhook given by URL (${c.conversion?.url ?? '?'}): whether it answers is not seen from here`,
        })
        continue
      }
      if (!read)
        findings.push({
          status: 'unknown',
          subject: c.name,
          message: `${c.name} converts through Service ${s.namespace}/${s.name}:${s.port}, which this snapshot did not read`,
        })
      else if (!read.ok) need(read)
      else {
        const why = gap(c, read.value[`${s.namespace}/${s.name}`])
        findings.push(
          why
            ? {
                status: 'fail',
                subject: c.name,
                code: 'unserved',
                message: `${c.name} converts through a webhook on ${s.namespace}/${s.name}:${s.port}, but ${why}: every request that needs a conversion fails`,
                evidence: { crd: c.name, service: s, servedVersions: c.servedVersions },
                fix: {
                  summary: `remove the conversion webhook (Karpenter ≥ 1.1's CRDs have none; ${c.name} serves ${c.servedVersions.join(', ')}${c.servedVersions.some((v) => v !== 'v1') ? ': upgrade the karpenter-crd chart as well, which drops v1beta1' : ''})`,
                  commands: [
                    `kubectl patch crd ${c.name} --type merge -p ${shellQuote(NO_CONVERSION_PATCH)}`,
                  ],
                },
              }
            : {
                status: 'pass',
                subject: c.name,
                message: `${c.name} converts through ${s.namespace}/${s.name}:${s.port}, which its Service serves (whether a pod answers: controller-ready)`,
              },
        )
      }
    }
    return findings
  },
}
