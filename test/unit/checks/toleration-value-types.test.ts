import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { tolerationValueTypes } from '../../../src/checks/toleration-value-types.js'
import type { Facts, HelmRelease } from '../../../src/facts/types.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

const run = (f: Facts) => runCheck(tolerationValueTypes, f)
const release = (f: Facts) => (f.kube.release.ok ? f.kube.release.value : null) as HelmRelease

test('healthy: every value is a string → pass', () => {
  const r = run(healthyFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[0]!.subject, 'kube-system/karpenter')
})

test('a boolean toleration value → fail naming the path, re-specifying the whole list with --set-string', () => {
  const r = run(
    healthyFacts((f) => {
      const tolerations = [
        { key: 'CriticalAddonsOnly', operator: 'Exists' },
        { key: 'dedicated', operator: 'Equal', value: true, effect: 'NoSchedule', tolerationSeconds: 300 },
      ]
      release(f).values.tolerations = tolerations
      release(f).computedValues.tolerations = tolerations
    }),
  )
  assert.equal(r.status, 'fail')
  assert.equal(r.findings.length, 1, 'user and computed values report the same path once')
  const f = r.findings[0]!
  assert.match(
    f.message,
    /^tolerations\[1\]\.value = true \(boolean\) in the Helm values \(helm get values\) of kube-system\/karpenter/,
  )
  assert.deepEqual(f.evidence, {
    path: 'tolerations[1].value',
    value: true,
    valueType: 'boolean',
    source: 'the Helm values (helm get values)',
  })
  const cmd = f.fix?.commands?.[0] ?? ''
  assert.match(
    cmd,
    /^helm upgrade karpenter oci:\/\/public\.ecr\.aws\/karpenter\/karpenter --namespace kube-system --version 1\.14\.1 --reuse-values/,
  )
  assert.ok(
    cmd.includes(
      `--set-string 'tolerations[0].key=CriticalAddonsOnly,tolerations[0].operator=Exists,tolerations[1].key=dedicated,tolerations[1].operator=Equal,tolerations[1].value=true,tolerations[1].effect=NoSchedule'`,
    ),
    cmd,
  )
  assert.ok(cmd.endsWith(`--set 'tolerations[1].tolerationSeconds=300'`), cmd)
  assert.match(f.fix?.snippet?.text ?? '', /- key: "dedicated"\n {4}operator: "Equal"\n {4}value: "true"/)
})

test('a number annotation and a boolean label → one fail each with a --set-string fix', () => {
  const r = run(
    healthyFacts((f) => {
      release(f).values.podAnnotations = { 'prometheus.io/port': 8080 }
      release(f).computedValues.podLabels = { 'team-on-call': false }
    }),
  )
  assert.equal(r.status, 'fail')
  assert.deepEqual(
    r.findings.map((f) => [f.evidence?.path, f.evidence?.source]),
    [
      ['podAnnotations.prometheus\\.io/port', 'the Helm values (helm get values)'],
      ['podLabels.team-on-call', 'the computed Helm values'],
    ],
  )
  assert.ok(
    r.findings[0]!.fix?.commands?.[0]?.endsWith(`--set-string 'podAnnotations.prometheus\\.io/port=8080'`),
  )
  assert.equal(r.findings[0]!.fix?.snippet?.text, 'podAnnotations:\n  prometheus.io/port: "8080"')
})

test('failed read of the release → unknown', () => {
  const r = run(healthyFacts((f) => (f.kube.release = failed('get secret sh.helm.release.v1.karpenter.v1'))))
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /could not read get secret/)
})

test('no Karpenter release → skipped', () => {
  const r = run(healthyFacts((f) => (f.kube.release = ok(null))))
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /no Karpenter Helm release/)
})
