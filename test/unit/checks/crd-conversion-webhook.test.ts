// crd-conversion-webhook: Karpenter's CRDs convert through no webhook that is gone. The failing case is
// the one issue 33 found on the bed: a getting-started 1.0.14 install (its chart's crds/ folder made the
// CRDs) upgraded to 1.14.1 kept `conversion.strategy: Webhook` to kube-system/karpenter:8443, a port
// the 1.14.1 chart's Service no longer has.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { crdConversionWebhook } from '../../../src/checks/crd-conversion-webhook.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

const HOOK = {
  strategy: 'Webhook' as const,
  service: { namespace: 'kube-system', name: 'karpenter', port: 8443 },
}
const withHook = (services: Facts['kube']['conversionServices']) =>
  healthyFacts((f) => {
    if (f.kube.crds.ok) f.kube.crds.value = f.kube.crds.value.map((c) => ({ ...c, conversion: HOOK }))
    if (services) f.kube.conversionServices = services
    else delete f.kube.conversionServices
  })
const SERVICE_1_14 = {
  namespace: 'kube-system',
  name: 'karpenter',
  ports: [{ name: 'http-metrics', port: 8080 }],
}

test('pass: no CRD converts through a webhook (the 1.1+ charts)', () => {
  const r = runCheck(crdConversionWebhook, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /none of Karpenter's \d+ CRDs converts through a webhook/)
})

test('pass: a 1.0.x webhook whose Service serves its port', () => {
  const r = runCheck(
    crdConversionWebhook,
    withHook(
      ok({
        'kube-system/karpenter': {
          ...SERVICE_1_14,
          ports: [...SERVICE_1_14.ports, { name: 'https-webhook', port: 8443 }],
        },
      }),
    ),
  )
  assert.equal(r.status, 'pass')
})

test('fail: the webhook left behind after an upgrade past 1.1 (the Service has no 8443), with the patch that removes it', () => {
  const r = runCheck(crdConversionWebhook, withHook(ok({ 'kube-system/karpenter': SERVICE_1_14 })))
  assert.equal(r.status, 'fail')
  const f = r.findings.find((x) => x.subject === 'nodepools.karpenter.sh')!
  assert.match(
    f.message,
    /converts through a webhook on kube-system\/karpenter:8443, but its Service kube-system\/karpenter serves no port 8443 \(ports: 8080\)/,
  )
  assert.deepEqual(f.fix?.commands, [
    `kubectl patch crd nodepools.karpenter.sh --type merge -p '{"spec":{"conversion":{"strategy":"None","webhook":null}}}'`,
  ])
  assert.equal(f.code, 'unserved')
  const gone = runCheck(crdConversionWebhook, withHook(ok({ 'kube-system/karpenter': null })))
  assert.match(gone.findings[0]!.message, /its Service kube-system\/karpenter does not exist/)
})

test('unknown: the Services could not be read, or a snapshot from before they were collected, or a URL webhook', () => {
  const denied = runCheck(
    crdConversionWebhook,
    withHook(failed('kubernetes: CRD conversion webhook Services')),
  )
  assert.equal(denied.status, 'unknown')
  const old = runCheck(crdConversionWebhook, withHook(undefined))
  assert.equal(old.status, 'unknown')
  assert.match(old.findings[0]!.message, /which this snapshot did not read/)
  const url = healthyFacts((f) => {
    if (f.kube.crds.ok)
      f.kube.crds.value = [
        { ...f.kube.crds.value[0]!, conversion: { strategy: 'Webhook', url: 'https://x' } },
      ]
  })
  assert.equal(runCheck(crdConversionWebhook, url).status, 'unknown')
  const unreadCrds = healthyFacts((f) => (f.kube.crds = failed('kubernetes: Karpenter CRDs')))
  assert.equal(runCheck(crdConversionWebhook, unreadCrds).status, 'unknown')
  const none = healthyFacts((f) => (f.kube.crds = ok([])))
  assert.equal(runCheck(crdConversionWebhook, none).status, 'skipped')
})
