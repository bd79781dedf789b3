// Karpenter installed without a Helm release (Argo CD renders the chart with `helm template` and applies
// the objects: argoproj/argo-cd#3867; Flux's kustomize-controller; `helm template | kubectl apply`):
// doctor judges what the live Deployment and ServiceAccount show, with the verdicts of the same install
// made by Helm, and prints no helm command for a release that does not exist.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { runChecks } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { CLUSTER, healthyFacts, withoutHelm } from '../../helpers/facts.js'

const statuses = (f: Facts) =>
  Object.fromEntries(runChecks(catalog, f).map((r) => [r.meta.id, r.findings.map((x) => x.status)]))

test('a healthy install Argo CD applied: every check says what it says of the Helm install, bar the Helm-only ones', () => {
  const helm = statuses(healthyFacts())
  const argo = statuses(healthyFacts(withoutHelm()))
  // Helm's own: the release's status and the CRD chart's agreement; the values' types (the API server
  // typed what Argo CD applied).
  assert.deepEqual(argo['toleration-value-types'], ['skipped'])
  assert.deepEqual(
    argo['helm-release'],
    helm['helm-release']!.slice(0, 2).concat(helm['helm-release']!.slice(3)).slice(1),
  )
  for (const id of Object.keys(helm).filter((k) => k !== 'toleration-value-types' && k !== 'helm-release'))
    assert.deepEqual(argo[id], helm[id], id)
  assert.ok(
    !Object.values(argo)
      .flat()
      .some((s) => s === 'fail' || s === 'warn'),
  )
})

test('settings read back from the environment are judged: a cluster name of another cluster fails', () => {
  const f = healthyFacts((f) => {
    if (f.kube.deployment.ok && f.kube.deployment.value)
      f.kube.deployment.value.env = { ...f.kube.deployment.value.env, CLUSTER_NAME: 'old-demo' }
    withoutHelm({ tool: 'manifests' })(f)
  })
  const result = runChecks(catalog, f).find((r) => r.meta.id === 'helm-release')!
  const failing = result.findings.find((x) => x.status === 'fail')!
  assert.match(failing.message, /settings\.clusterName .* is "old-demo", but this cluster is demo/)
  // The chart rendered the setting into the environment: set it there; no release to upgrade.
  assert.deepEqual(failing.fix?.commands, [
    `kubectl set env deployment/karpenter --namespace kube-system CLUSTER_NAME=${CLUSTER}`,
  ])
  assert.doesNotMatch(failing.fix?.summary ?? '', /next sync/)
})

test('with Argo CD, a fix to the live objects says where it must also be made', () => {
  const f = healthyFacts((f) => {
    if (f.kube.deployment.ok && f.kube.deployment.value)
      f.kube.deployment.value.env = {
        ...f.kube.deployment.value.env,
        INTERRUPTION_QUEUE: `https://sqs.us-west-2.amazonaws.com/123456789012/${CLUSTER}`,
      }
    withoutHelm()(f)
  })
  const result = runChecks(catalog, f).find((r) => r.meta.id === 'interruption-queue')!
  // A queue URL where the name belongs (the setting rendered into INTERRUPTION_QUEUE).
  const failing = result.findings.find((x) => x.status === 'fail')!
  assert.deepEqual(failing.fix?.commands, [
    `kubectl set env deployment/karpenter --namespace kube-system INTERRUPTION_QUEUE=${CLUSTER}`,
  ])
  assert.ok(!failing.fix?.commands?.some((c) => c.startsWith('helm ')))
  assert.match(
    failing.fix?.summary ?? '',
    /Karpenter has no Helm release here \(Argo CD application "karpenter"\): make the same change in the Helm values it renders the chart with, or its next sync undoes it$/,
  )
})
