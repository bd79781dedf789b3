// The conditions sts-regional-annotation judges, one at a time (issue 12, item 8: mutation testing):
// where the annotation is set, its type and spelling, the live ServiceAccount, and each finding exact.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { STS_ANNOTATION, stsRegionalAnnotation } from '../../../src/checks/sts-regional-annotation.js'
import type { Facts, HelmRelease, ServiceAccount } from '../../../src/facts/types.js'
import { CONTROLLER_ROLE_ARN, failed, healthyFacts, ok } from '../../helpers/facts.js'

const findings = (fn?: (f: Facts) => void) => runCheck(stsRegionalAnnotation, healthyFacts(fn)).findings
const release = (f: Facts) => (f.kube.release.ok ? f.kube.release.value : null) as HelmRelease
const liveSa = (f: Facts) => (f.kube.serviceAccount.ok ? f.kube.serviceAccount.value : null) as ServiceAccount
const both =
  (...fns: ((f: Facts) => void)[]) =>
  (f: Facts) =>
    fns.forEach((fn) => fn(f))

const userValue = (value: unknown) => (f: Facts) => {
  release(f).values.serviceAccount = { annotations: { [STS_ANNOTATION]: value } }
}
const computedValue = (value: unknown) => (f: Facts) => {
  ;(release(f).computedValues.serviceAccount as Record<string, unknown>).annotations = {
    [STS_ANNOTATION]: value,
  }
}
const additional = (value: unknown) => (f: Facts) => {
  release(f).values.additionalAnnotations = { [STS_ANNOTATION]: value }
}
const rendered = (value: unknown) => (f: Facts) => {
  release(f).renderedServiceAccount = {
    name: 'karpenter',
    annotations: { [STS_ANNOTATION]: value as string },
  }
}
const live = (value: string) => (f: Facts) => {
  liveSa(f).metadata.annotations = {
    'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN,
    [STS_ANNOTATION]: value,
  }
}

const SUBJECT = 'kube-system/karpenter'
const UPGRADE =
  'helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system --version 1.14.1 --reuse-values'
const stringFix = (
  path = 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints',
  yaml?: string,
) => ({
  summary:
    'set the annotation as a string (--set-string, or quote it in values.yaml), then restart the controller so the webhook injects AWS_STS_REGIONAL_ENDPOINTS',
  commands: [
    `${UPGRADE} --set-string '${path}=true'`,
    'kubectl rollout restart deployment/karpenter -n kube-system',
    "kubectl get serviceaccount karpenter -n kube-system -o jsonpath='{.metadata.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints}'",
  ],
  snippet: {
    language: 'yaml',
    text: yaml ?? 'serviceAccount:\n  annotations:\n    eks.amazonaws.com/sts-regional-endpoints: "true"',
  },
})

test('sts-regional-annotation is an error-severity helm check', () => {
  assert.equal(stsRegionalAnnotation.meta.id, 'sts-regional-annotation')
  assert.equal(stsRegionalAnnotation.meta.severity, 'error')
  assert.equal(stsRegionalAnnotation.meta.category, 'helm')
})

test('not IRSA: skipped, saying which identity', () => {
  assert.deepEqual(
    findings((f) => (f.iam.controllerIdentity = 'pod-identity')),
    [
      {
        status: 'skipped',
        message:
          'the controller uses EKS Pod Identity: the STS endpoint annotation only affects IRSA, so it is not needed',
      },
    ],
  )
  assert.deepEqual(
    findings((f) => (f.iam.controllerIdentity = 'none')),
    [
      {
        status: 'skipped',
        message:
          'the controller identity is not IRSA (no eks.amazonaws.com/role-arn found): the annotation only matters with IRSA',
      },
    ],
  )
})

test('absent: the exact pass; on v1.0.x and v0.x it advises the annotation', () => {
  assert.deepEqual(findings(), [
    {
      status: 'pass',
      subject: SUBJECT,
      message: `${STS_ANNOTATION} is not set on ${SUBJECT}: not needed, Karpenter's AWS SDK for Go v2 uses the regional STS endpoint by default`,
      evidence: { annotation: STS_ANNOTATION, set: false, chartVersion: '1.14.1' },
    },
  ])
  for (const v of ['1.0.14', '0.37.0']) {
    assert.equal(
      findings((f) => (release(f).chartVersion = v))[0]!.message,
      `${STS_ANNOTATION} is not set on ${SUBJECT}: not required; Karpenter ${v} (aws-sdk-go v1) then uses the global STS endpoint, so setting it to the string "true" is advisable`,
    )
  }
  assert.match(
    findings((f) => (release(f).chartVersion = '1.1.0'))[0]!.message,
    /not needed, Karpenter's AWS SDK for Go v2/,
  )
  assert.match(
    findings((f) => (release(f).chartVersion = '2.0.0'))[0]!.message,
    /not needed, Karpenter's AWS SDK for Go v2/,
  )
  assert.match(
    findings((f) => {
      release(f).chartVersion = 'latest'
      release(f).appVersion = 'main'
    })[0]!.message,
    /not needed, Karpenter's AWS SDK for Go v2/,
  )
})

test('"true" in the values and live: the exact pass; set only on the live ServiceAccount: said so', () => {
  assert.deepEqual(findings(both(userValue('true'), live('true'))), [
    {
      status: 'pass',
      subject: SUBJECT,
      message: `${STS_ANNOTATION} is the string "true" in the Helm values and on ${SUBJECT}: the webhook injects AWS_STS_REGIONAL_ENDPOINTS=regional`,
      evidence: { value: 'true', inHelmValues: true },
    },
  ])
  assert.deepEqual(findings(live('false')), [
    {
      status: 'pass',
      subject: SUBJECT,
      message: `${STS_ANNOTATION} is the string "false" on ${SUBJECT} (set outside the Helm values): the webhook injects no regional override (AWS SDK for Go v2 uses regional STS anyway)`,
      evidence: { value: 'false', inHelmValues: false },
    },
  ])
})

test('a boolean in the user values: the exact fail, once (the rendered manifest is not reported again)', () => {
  const f = findings(both(userValue(true), rendered(true)))
  assert.deepEqual(f, [
    {
      status: 'fail',
      subject: SUBJECT,
      message: `${STS_ANNOTATION} is the boolean true in the Helm values (helm get values), not the string "true": Helm cannot build the ServiceAccount ("cannot unmarshal bool into Go struct field ObjectMeta.metadata.annotations of type string"), so the upgrade fails and the annotation never lands`,
      evidence: {
        where: 'the Helm values (helm get values)',
        path: 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints',
        value: true,
        valueType: 'boolean',
      },
      fix: stringFix(),
    },
  ])
})

test('a number or a list: named by their Go JSON types', () => {
  assert.match(findings(userValue(1))[0]!.message, /is the number 1 in .*cannot unmarshal number into/)
  assert.match(
    findings(userValue(['true']))[0]!.message,
    /is the object \["true"\] in .*cannot unmarshal array into/,
  )
})

test('a non-string only in the rendered manifest: the type failure names the manifest, without a values path', () => {
  const [f] = findings(rendered(true))
  assert.equal(f!.status, 'fail')
  assert.match(
    f!.message,
    /is the boolean true in the ServiceAccount manifest the release rendered, not the string/,
  )
  assert.equal(f!.evidence?.path, undefined)
  assert.deepEqual(f!.fix, stringFix())
})

test('computed values count only where the user values say nothing; null is not a value', () => {
  const [f] = findings(computedValue(false))
  assert.match(f!.message, /is the boolean false in the computed Helm values, not/)
  assert.equal(findings(both(userValue('true'), computedValue(false), live('true')))[0]!.status, 'pass')
  assert.equal(findings(userValue(null))[0]!.message.includes('is not set on'), true)
})

test('additionalAnnotations is judged too, and its fix sets that key', () => {
  const [f] = findings(additional(true))
  assert.equal(f!.evidence?.path, 'additionalAnnotations.eks\\.amazonaws\\.com/sts-regional-endpoints')
  assert.deepEqual(
    f!.fix,
    stringFix(
      'additionalAnnotations.eks\\.amazonaws\\.com/sts-regional-endpoints',
      'additionalAnnotations:\n  eks.amazonaws.com/sts-regional-endpoints: "true"',
    ),
  )
})

test('ParseBool spellings warn, anything else fails: the exact findings', () => {
  for (const v of ['1', 't', 'T', 'TRUE', 'True', '0', 'f', 'F', 'FALSE', 'False']) {
    const [f] = findings(both(userValue(v), live(v)))
    assert.equal(f!.status, 'warn', v)
  }
  const [w] = findings(both(userValue('1'), live('1')))
  assert.deepEqual(w, {
    status: 'warn',
    subject: SUBJECT,
    message: `${STS_ANNOTATION} is "1" in the Helm values (helm get values): the webhook accepts it (strconv.ParseBool), but write "true" or "false"`,
    evidence: { where: 'the Helm values (helm get values)', value: '1' },
    fix: stringFix(),
  })
  const [bad] = findings(both(userValue('yes'), live('yes')))
  assert.deepEqual(bad, {
    status: 'fail',
    subject: SUBJECT,
    message: `${STS_ANNOTATION} is "yes" in the Helm values (helm get values): not "true"/"false", so the pod identity webhook ignores it`,
    evidence: { where: 'the Helm values (helm get values)', value: 'yes' },
    fix: stringFix(),
  })
})

test('a bad spelling only on the live ServiceAccount is judged there', () => {
  const [f] = findings(live('yes'))
  assert.equal(f!.status, 'fail')
  assert.match(f!.message, /is "yes" in the live ServiceAccount kube-system\/karpenter: not "true"\/"false"/)
})

test('drift between values and the live ServiceAccount: the exact warning', () => {
  assert.deepEqual(findings(both(userValue('false'), live('true'))), [
    {
      status: 'warn',
      subject: SUBJECT,
      message: `${STS_ANNOTATION} is "true" on the live ServiceAccount ${SUBJECT} but "false" in the Helm values (helm get values): the next helm upgrade changes it`,
      evidence: {
        live: 'true',
        values: 'false',
        path: 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints',
      },
      fix: stringFix(),
    },
  ])
})

test('no drift when only the rendered manifest differs (no values occurrence to compare)', () => {
  assert.equal(findings(both(rendered('false'), live('true')))[0]!.status, 'pass')
})

test('set in the values but not on the live ServiceAccount: each reason, and the fix for each', () => {
  const notLive = findings(userValue('true'))
  assert.deepEqual(notLive, [
    {
      status: 'fail',
      subject: SUBJECT,
      message: `${STS_ANNOTATION} is set in the Helm values but missing on the live ServiceAccount ${SUBJECT}: the release did not apply it (a rejected upgrade, or the ServiceAccount was replaced outside Helm)`,
      code: 'missing-on-live',
      evidence: {
        values: [
          {
            where: 'the Helm values (helm get values)',
            path: 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints',
            value: 'true',
          },
        ],
        liveServiceAccount: SUBJECT,
      },
      fix: stringFix(),
    },
  ])
  const gone = findings(both(userValue('true'), (f) => (f.kube.serviceAccount = ok(null))))[0]!
  assert.match(gone.message, /: the ServiceAccount kube-system\/karpenter does not exist$/)
  assert.equal(gone.evidence?.liveServiceAccount, null)
  assert.deepEqual(gone.fix, stringFix())
  const external = findings(
    both(
      userValue('true'),
      (f) => ((release(f).computedValues.serviceAccount as Record<string, unknown>).create = false),
    ),
  )[0]!
  assert.match(
    external.message,
    /: serviceAccount\.create is false, so Helm does not manage kube-system\/karpenter$/,
  )
  assert.deepEqual(external.fix, {
    summary: `annotate the ServiceAccount ${SUBJECT} yourself (Helm does not manage it), then restart the controller`,
    commands: [
      `kubectl annotate serviceaccount karpenter -n kube-system ${STS_ANNOTATION}=true --overwrite`,
      'kubectl rollout restart deployment/karpenter -n kube-system',
    ],
  })
  // Not created by Helm and missing: nothing to annotate, the values fix.
  const externalGone = findings(
    both(
      userValue('true'),
      (f) => ((release(f).computedValues.serviceAccount as Record<string, unknown>).create = false),
      (f) => (f.kube.serviceAccount = ok(null)),
    ),
  )[0]!
  assert.deepEqual(externalGone.fix, stringFix())
})

test('only the rendered manifest declares it and the live ServiceAccount lacks it: not applied, with the default fix', () => {
  const [f] = findings(rendered('true'))
  assert.equal(f!.status, 'fail')
  assert.deepEqual(f!.evidence?.values, [])
  assert.deepEqual(f!.fix, stringFix())
})

test('the live ServiceAccount unreadable: unknown with the reason, and the values still judged', () => {
  const f = findings(
    both(userValue(true), (f) => (f.kube.serviceAccount = failed('get serviceaccount karpenter'))),
  )
  assert.deepEqual(
    f.map((x) => x.status),
    ['fail', 'unknown'],
  )
  assert.deepEqual(f[1], {
    status: 'unknown',
    subject: SUBJECT,
    message:
      'live ServiceAccount kube-system/karpenter: could not read get serviceaccount karpenter (permission denied: AccessDenied — AccessDenied for get serviceaccount karpenter)',
    evidence: { read: 'get serviceaccount karpenter' },
  })
})

test('the deployment name comes from the live Deployment when read, else the release', () => {
  const renamed = findings(
    both(userValue(true), (f) => {
      if (f.kube.deployment.ok && f.kube.deployment.value) f.kube.deployment.value.metadata.name = 'kp'
    }),
  )[0]!
  assert.equal(renamed.fix!.commands![1], 'kubectl rollout restart deployment/kp -n kube-system')
  const unread = findings(both(userValue(true), (f) => (f.kube.deployment = failed('get deployment'))))[0]!
  assert.equal(unread.fix!.commands![1], 'kubectl rollout restart deployment/karpenter -n kube-system')
})

test('the subject follows the live ServiceAccount name and namespace', () => {
  const [f] = findings((f) => {
    liveSa(f).metadata.name = 'kc'
    liveSa(f).metadata.namespace = 'karpenter'
  })
  assert.equal(f!.subject, 'karpenter/kc')
})

test('a boolean in the values with "true" live: only the type failure, no drift', () => {
  const f = findings(both(userValue(true), live('true')))
  assert.deepEqual(
    f.map((x) => x.status),
    ['fail'],
  )
})

test('annotations set to null in the values, or absent on the live ServiceAccount: not set', () => {
  assert.match(
    findings((f) => (release(f).values.serviceAccount = { annotations: null }))[0]!.message,
    /is not set on kube-system\/karpenter/,
  )
  assert.match(
    findings((f) => delete liveSa(f).metadata.annotations)[0]!.message,
    /is not set on kube-system\/karpenter/,
  )
})

test('a null rendered into the manifest is named as null', () => {
  const [f] = findings(rendered(null))
  assert.match(
    f!.message,
    /is the null null in the ServiceAccount manifest the release rendered, not the string "true": .*cannot unmarshal null into/,
  )
})

test('the live ServiceAccount unreadable while the values set "true": only the unknown, no "not applied"', () => {
  const f = findings(
    both(userValue('true'), (f) => (f.kube.serviceAccount = failed('get serviceaccount karpenter'))),
  )
  assert.deepEqual(
    f.map((x) => x.status),
    ['unknown'],
  )
})

test('no controller Deployment: the restart names the release', () => {
  const [f] = findings(both(userValue(true), (f) => (f.kube.deployment = ok(null))))
  assert.equal(f!.fix!.commands![1], 'kubectl rollout restart deployment/karpenter -n kube-system')
})
