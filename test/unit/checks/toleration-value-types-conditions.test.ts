// The conditions toleration-value-types judges, one at a time (issue 12, item 8: mutation testing):
// which values are linted (the user's first, the computed ones only for paths the user's lack), the
// finding each non-string value gets, and the fix: one --set-string for a map value, the whole
// tolerations list re-specified (strings with --set-string, tolerationSeconds with --set) for a toleration.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { tolerationValueTypes } from '../../../src/checks/toleration-value-types.js'
import type { Facts, HelmRelease } from '../../../src/facts/types.js'
import { healthyFacts } from '../../helpers/facts.js'

const release = (f: Facts) => (f.kube.release.ok ? f.kube.release.value : null) as HelmRelease
const run = (fn?: (f: Facts) => void) => runCheck(tolerationValueTypes, healthyFacts(fn)).findings
const UPGRADE =
  'helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system --version 1.14.1 --reuse-values'
const computedTolerations = (tolerations: unknown) => (f: Facts) => {
  release(f).computedValues.tolerations = tolerations
}

test('toleration-value-types is an error-severity helm check', () => {
  assert.equal(tolerationValueTypes.meta.id, 'toleration-value-types')
  assert.equal(tolerationValueTypes.meta.severity, 'error')
  assert.equal(tolerationValueTypes.meta.category, 'helm')
})

test('healthy: one pass naming the release, exactly', () => {
  assert.deepEqual(run(), [
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message:
        'every toleration value, annotation, label and nodeSelector value in the Helm values of kube-system/karpenter is a string',
    },
  ])
})

test('a number nodeSelector value in the user values: the finding and its --set-string fix, exact', () => {
  const findings = run((f) => {
    release(f).name = 'kp'
    release(f).namespace = 'karpenter'
    release(f).chartVersion = '1.13.0'
    release(f).values.nodeSelector = { pool: 7 }
  })
  assert.deepEqual(findings, [
    {
      status: 'fail',
      subject: 'karpenter/kp',
      message:
        'nodeSelector.pool = 7 (number) in the Helm values (helm get values) of karpenter/kp: Kubernetes needs a string, so the API server rejects the object',
      evidence: {
        path: 'nodeSelector.pool',
        value: 7,
        valueType: 'number',
        source: 'the Helm values (helm get values)',
      },
      fix: {
        summary: 'pass nodeSelector.pool as a string (--set-string, or quote it in your values file)',
        commands: [
          "helm upgrade kp oci://public.ecr.aws/karpenter/karpenter --namespace karpenter --version 1.13.0 --reuse-values --set-string 'nodeSelector.pool=7'",
        ],
        snippet: { language: 'yaml', text: 'nodeSelector:\n  pool: "7"' },
      },
    },
  ])
})

test('a single quote in a key is escaped for the shell', () => {
  const findings = run((f) => (release(f).values.podAnnotations = { "it's": true }))
  assert.equal(findings[0]?.fix?.commands?.[0], `${UPGRADE} --set-string 'podAnnotations.it'\\''s=true'`)
})

test('a toleration in the computed values only: the computed list is re-specified, exact', () => {
  const findings = run(
    computedTolerations([
      { key: 'spot', operator: 'Equal', value: 1, effect: 'NoExecute', tolerationSeconds: 60 },
      { key: 'x', operator: 'Exists', tolerationSeconds: 5 },
    ]),
  )
  assert.deepEqual(findings, [
    {
      status: 'fail',
      subject: 'kube-system/karpenter',
      message:
        'tolerations[0].value = 1 (number) in the computed Helm values of kube-system/karpenter: Kubernetes needs a string, so the API server rejects the object',
      evidence: {
        path: 'tolerations[0].value',
        value: 1,
        valueType: 'number',
        source: 'the computed Helm values',
      },
      fix: {
        summary:
          'make tolerations[0].value the string "1": re-specify the whole tolerations list (Helm replaces lists), or put the snippet in your values file',
        commands: [
          `${UPGRADE} --set-string 'tolerations[0].key=spot,tolerations[0].operator=Equal,tolerations[0].value=1,tolerations[0].effect=NoExecute,tolerations[1].key=x,tolerations[1].operator=Exists' --set 'tolerations[0].tolerationSeconds=60,tolerations[1].tolerationSeconds=5'`,
        ],
        snippet: {
          language: 'yaml',
          text: 'tolerations:\n  - key: "spot"\n    operator: "Equal"\n    value: "1"\n    effect: "NoExecute"\n    tolerationSeconds: 60\n  - key: "x"\n    operator: "Exists"\n    tolerationSeconds: 5',
        },
      },
    },
  ])
})

test('tolerations only in the user values (none computed): the user list; no --set without tolerationSeconds', () => {
  const findings = run((f) => {
    delete release(f).computedValues.tolerations
    release(f).values.tolerations = [{ key: 'a', operator: 'Equal', value: false }]
  })
  assert.deepEqual(findings[0]?.fix?.commands, [
    `${UPGRADE} --set-string 'tolerations[0].key=a,tolerations[0].operator=Equal,tolerations[0].value=false'`,
  ])
})

test('entries that are not maps, and null fields, drop out of the re-specified list', () => {
  const findings = run(computedTolerations([{ key: 'a', value: true, effect: null }, 'junk', null, ['x']]))
  assert.equal(findings.length, 1)
  assert.deepEqual(findings[0]?.fix?.commands, [
    `${UPGRADE} --set-string 'tolerations[0].key=a,tolerations[0].value=true'`,
  ])
  assert.equal(
    findings[0]?.fix?.snippet?.text,
    'tolerations:\n  - key: "a"\n    value: "true"\n    effect: null\n  - {}\n  - {}\n  - {}',
  )
})

test('a nested value in a toleration is kept as it is in the snippet, not turned into a string', () => {
  const findings = run(computedTolerations([{ key: 'a', value: 1, extra: { x: 1 } }]))
  assert.equal(
    findings[0]?.fix?.snippet?.text,
    'tolerations:\n  - key: "a"\n    value: "1"\n    extra:\n      x: 1',
  )
})

test('a tolerationSeconds that is not a number is passed as a string', () => {
  const findings = run(computedTolerations([{ key: 'a', value: 2, tolerationSeconds: '30' }]))
  assert.deepEqual(findings[0]?.fix?.commands, [
    `${UPGRADE} --set-string 'tolerations[0].key=a,tolerations[0].value=2,tolerations[0].tolerationSeconds=30'`,
  ])
})

test('the same path in the user and computed values is reported once, from the user values', () => {
  const findings = run((f) => {
    release(f).values.podLabels = { team: 1 }
    release(f).computedValues.podLabels = { team: 1, tier: true }
  })
  assert.deepEqual(
    findings.map((x) => [x.evidence?.path, x.evidence?.source]),
    [
      ['podLabels.team', 'the Helm values (helm get values)'],
      ['podLabels.tier', 'the computed Helm values'],
    ],
  )
})
