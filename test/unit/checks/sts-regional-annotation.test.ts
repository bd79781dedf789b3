import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { STS_ANNOTATION, stsRegionalAnnotation } from '../../../src/checks/sts-regional-annotation.js'
import type { Facts, HelmRelease, ServiceAccount } from '../../../src/facts/types.js'
import { CONTROLLER_ROLE_ARN, failed, healthyFacts } from '../../helpers/facts.js'

const run = (f: Facts) => runCheck(stsRegionalAnnotation, f)
const release = (f: Facts) => (f.kube.release.ok ? f.kube.release.value : null) as HelmRelease
const liveSa = (f: Facts) => (f.kube.serviceAccount.ok ? f.kube.serviceAccount.value : null) as ServiceAccount

/** Puts the annotation in the user values, the computed values and the rendered manifest, as helm would. */
function inValues(f: Facts, value: unknown) {
  const r = release(f)
  const annotations = { 'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN, [STS_ANNOTATION]: value }
  r.values.serviceAccount = { annotations }
  ;(r.computedValues.serviceAccount as Record<string, unknown>).annotations = annotations
  r.renderedServiceAccount = { name: 'karpenter', annotations }
}
function onLiveSa(f: Facts, value: string) {
  liveSa(f).metadata.annotations = {
    'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN,
    [STS_ANNOTATION]: value,
  }
}

test('healthy, annotation absent: pass, with why it is not needed', () => {
  const r = run(healthyFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[0]!.subject, 'kube-system/karpenter')
  assert.match(
    r.findings[0]!.message,
    /not set .*not needed, Karpenter's AWS SDK for Go v2 uses the regional STS endpoint by default/,
  )
})

test('healthy, the string "true" in values and on the live ServiceAccount: pass', () => {
  const r = run(
    healthyFacts((f) => {
      inValues(f, 'true')
      onLiveSa(f, 'true')
    }),
  )
  assert.equal(r.status, 'pass')
  assert.match(
    r.findings[0]!.message,
    /is the string "true" in the Helm values and on kube-system\/karpenter/,
  )
})

test('the --set pitfall: a boolean true in the Helm values → fail with --set-string and a quoted values snippet', () => {
  const r = run(healthyFacts((f) => inValues(f, true)))
  assert.equal(r.status, 'fail')
  assert.equal(r.findings.length, 1, 'one root cause, one finding')
  const f = r.findings[0]!
  assert.equal(f.subject, 'kube-system/karpenter')
  assert.match(f.message, /is the boolean true in the Helm values \(helm get values\), not the string "true"/)
  assert.match(
    f.message,
    /cannot unmarshal bool into Go struct field ObjectMeta\.metadata\.annotations of type string/,
  )
  assert.equal(f.evidence?.value, true)
  assert.equal(f.evidence?.path, 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints')
  const helm = f.fix?.commands?.[0] ?? ''
  assert.match(
    helm,
    /^helm upgrade karpenter oci:\/\/public\.ecr\.aws\/karpenter\/karpenter --namespace kube-system --version 1\.14\.1 --reuse-values/,
  )
  assert.ok(
    helm.endsWith(
      `--set-string 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints=true'`,
    ),
    helm,
  )
  assert.equal(
    f.fix?.snippet?.text,
    'serviceAccount:\n  annotations:\n    eks.amazonaws.com/sts-regional-endpoints: "true"',
  )
})

test('present in the values but missing on the live ServiceAccount → fail: the release did not apply', () => {
  const r = run(
    healthyFacts((f) => {
      inValues(f, 'true')
    }),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]!.message,
    /set in the Helm values but missing on the live ServiceAccount kube-system\/karpenter: the release did not apply it/,
  )
  assert.match(
    r.findings[0]!.fix?.commands?.join('\n') ?? '',
    /kubectl rollout restart deployment\/karpenter -n kube-system/,
  )
})

test('serviceAccount.create=false: the fix annotates the user-managed ServiceAccount', () => {
  const r = run(
    healthyFacts((f) => {
      inValues(f, 'true')
      ;(release(f).computedValues.serviceAccount as Record<string, unknown>).create = false
    }),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]!.fix?.commands?.[0] ?? '',
    /^kubectl annotate serviceaccount karpenter -n kube-system eks\.amazonaws\.com\/sts-regional-endpoints=true --overwrite$/,
  )
})

test('a value other than "true"/"false" fails; ParseBool spellings only warn', () => {
  const invalid = run(
    healthyFacts((f) => {
      inValues(f, 'regional')
      onLiveSa(f, 'regional')
    }),
  )
  assert.equal(invalid.status, 'fail')
  assert.match(
    invalid.findings[0]!.message,
    /is "regional" in the Helm values .*the pod identity webhook ignores it/,
  )

  const odd = run(
    healthyFacts((f) => {
      inValues(f, 'True')
      onLiveSa(f, 'True')
    }),
  )
  assert.equal(odd.status, 'warn')
})

test('"false" is a valid choice: pass', () => {
  const r = run(
    healthyFacts((f) => {
      inValues(f, 'false')
      onLiveSa(f, 'false')
    }),
  )
  assert.equal(r.status, 'pass')
})

test('live ServiceAccount differs from the values → warn (drift)', () => {
  const r = run(
    healthyFacts((f) => {
      inValues(f, 'true')
      onLiveSa(f, 'false')
    }),
  )
  assert.equal(r.status, 'warn')
  assert.match(r.findings[0]!.message, /"false" on the live ServiceAccount .* but "true" in the Helm values/)
})

test('failed read of the live ServiceAccount → unknown with the reason', () => {
  const r = run(
    healthyFacts((f) => {
      f.kube.serviceAccount = failed('get serviceaccount kube-system/karpenter', 'Forbidden')
    }),
  )
  assert.equal(r.status, 'unknown')
  assert.match(
    r.findings[0]!.message,
    /could not read get serviceaccount kube-system\/karpenter \(permission denied: Forbidden/,
  )
})

test('failed read of the release → unknown', () => {
  const r = run(healthyFacts((f) => (f.kube.release = failed('get secret sh.helm.release.v1.karpenter.v1'))))
  assert.equal(r.status, 'unknown')
})

test('Pod Identity → skipped: the annotation only matters with IRSA', () => {
  const r = run(
    healthyFacts((f) => {
      f.iam.controllerIdentity = 'pod-identity'
      inValues(f, true)
    }),
  )
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /Pod Identity/)
})

test('legacy v0.x without the annotation: pass, advising it (aws-sdk-go v1 defaults to the global endpoint)', () => {
  const r = run(
    healthyFacts((f) => {
      release(f).chartVersion = 'v0.30.0'
      release(f).appVersion = '0.30.0'
    }),
  )
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /aws-sdk-go v1\) then uses the global STS endpoint/)
})
