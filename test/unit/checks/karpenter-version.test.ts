import assert from 'node:assert/strict'
import { test } from 'node:test'
import { karpenterVersion } from '../../../src/checks/karpenter-version.js'
import { runCheck } from '../../../src/checks/run.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'
import { crd } from '../../helpers/check-fixtures.js'

const withRelease = (chartVersion: string, webhook = true) =>
  healthyFacts((f) => {
    if (!f.kube.release.ok || !f.kube.release.value) throw new Error('fixture')
    f.kube.release.value.chartVersion = chartVersion
    f.kube.release.value.appVersion = chartVersion
    f.kube.release.value.computedValues.webhook = { enabled: webhook, port: 8443 }
  })

const noRelease = (mutate: Parameters<typeof healthyFacts>[0]) =>
  healthyFacts((f) => {
    f.kube.release = ok(null)
    mutate?.(f)
  })

test('healthy 1.14.1 install passes and names the version', () => {
  const r = runCheck(karpenterVersion, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[0]?.subject, 'kube-system/karpenter')
  assert.match(r.findings[0]?.message ?? '', /1\.14\.1/)
})

test('v1.0.x warns about webhooks and shows the CRD-then-chart upgrade', () => {
  const r = runCheck(karpenterVersion, withRelease('1.0.14'))
  assert.equal(r.status, 'warn')
  const f = r.findings[0]!
  assert.match(f.message, /1\.0\.14.*8443/)
  assert.equal(f.evidence?.webhookEnabled, true)
  const commands = f.fix?.commands ?? []
  assert.ok(
    commands.some(
      (c) =>
        c.startsWith('helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd') &&
        c.includes('--version 1.14.1'),
    ),
  )
  assert.ok(
    commands
      .at(-1)
      ?.startsWith(
        'helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system --version 1.14.1',
      ),
  )
})

test('v1.0.x with webhooks disabled says v1beta1 cannot be converted', () => {
  const r = runCheck(karpenterVersion, withRelease('1.0.14', false))
  assert.equal(r.status, 'warn')
  assert.match(r.findings[0]?.message ?? '', /webhooks are disabled/)
})

test('v0.30 (v1alpha5) fails with the staged upgrade path and the legacy objects', () => {
  const f = withRelease('0.30.0')
  f.kube.legacy = ok({ provisioners: ['default'], awsNodeTemplates: ['default'] })
  const r = runCheck(karpenterVersion, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings[0]!
  assert.equal(finding.subject, 'Helm release kube-system/karpenter')
  assert.match(finding.message, /v0\.x install.*Provisioners default and AWSNodeTemplates default/)
  assert.deepEqual(finding.evidence?.legacyObjects, {
    provisioners: ['default'],
    awsNodeTemplates: ['default'],
  })
  const summary = finding.fix?.summary ?? ''
  assert.match(summary, /Provisioner → NodePool, AWSNodeTemplate → EC2NodeClass/)
  assert.match(summary, /v0\.32\.x\/v0\.33\.x.*v1\.0\.x.*v1\.1 or later/)
  assert.match(summary, /https:\/\/karpenter\.sh\/docs\/upgrading\/v1-migration\//)
})

test('v0.33 (v1beta1) starts the path at v1.0.x, with no v1alpha5 step', () => {
  const r = runCheck(karpenterVersion, withRelease('0.33.2'))
  assert.equal(r.status, 'fail')
  const summary = r.findings[0]?.fix?.summary ?? ''
  assert.doesNotMatch(summary, /Provisioner/)
  assert.match(summary, /^upgrade in stages: 1\) move to the latest patch/)
})

test('nothing installed fails with the helm install command', () => {
  const f = noRelease((f) => {
    f.kube.crds = ok([])
    f.kube.deployment = ok(null)
  })
  const r = runCheck(karpenterVersion, f)
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]?.message ?? '', /Karpenter is not installed in cluster demo/)
  assert.deepEqual(r.findings[0]?.fix?.commands, [
    'helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.14.1 --namespace kube-system --create-namespace --set settings.clusterName=demo --wait',
  ])
})

test('CRDs without a controller or release: partially removed', () => {
  const f = noRelease((f) => {
    f.kube.deployment = ok(null)
  })
  const r = runCheck(karpenterVersion, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings[0]!
  assert.equal(
    finding.subject,
    'nodepools.karpenter.sh, nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws',
  )
  assert.match(finding.message, /partially installed.*v1\.1 or later/)
  assert.ok(
    finding.fix?.commands?.includes(
      'kubectl delete crd nodepools.karpenter.sh nodeclaims.karpenter.sh ec2nodeclasses.karpenter.k8s.aws',
    ),
  )
})

test('v1alpha5 CRDs and Provisioners without a controller: the migration path', () => {
  const f = noRelease((f) => {
    f.kube.deployment = ok(null)
    f.kube.crds = ok([
      crd('provisioners.karpenter.sh', ['v1alpha5']),
      crd('awsnodetemplates.karpenter.k8s.aws', ['v1alpha1']),
    ])
    f.kube.legacy = ok({ provisioners: ['default'], awsNodeTemplates: [] })
  })
  const r = runCheck(karpenterVersion, f)
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]?.message ?? '', /Provisioners default exist \(v0\.x before v0\.32/)
  assert.match(r.findings[0]?.fix?.summary ?? '', /Provisioner → NodePool/)
})

test('controller running without a Helm release is judged by its image version', () => {
  const r = runCheck(
    karpenterVersion,
    noRelease(() => {}),
  )
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[0]?.subject, 'kube-system/karpenter')
  assert.match(
    r.findings[0]?.message ?? '',
    /^Karpenter 1\.14\.1 \(Deployment kube-system\/karpenter, no Helm release/,
  )
})

test('controller v0.x without a Helm release fails with the upgrade path', () => {
  const f = noRelease((f) => {
    if (f.kube.deployment.ok && f.kube.deployment.value)
      f.kube.deployment.value.image = 'public.ecr.aws/karpenter/controller:v0.30.0@sha256:abc'
  })
  const r = runCheck(karpenterVersion, f)
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]?.message ?? '', /Karpenter v0\.30\.0 .* v0\.x install/)
})

test('v1 release with leftover Provisioners warns', () => {
  const f = healthyFacts((f) => {
    f.kube.legacy = ok({ provisioners: ['old'], awsNodeTemplates: [] })
  })
  const r = runCheck(karpenterVersion, f)
  assert.equal(r.status, 'warn')
  const leftover = r.findings.find((x) => x.status === 'warn')!
  assert.match(leftover.message, /Provisioners old remain/)
  assert.ok(leftover.fix?.commands?.includes('kubectl delete provisioners.karpenter.sh old'))
})

test('a failed release read is unknown, never pass', () => {
  const f = healthyFacts((f) => {
    f.kube.release = failed('kube:list secrets kube-system')
  })
  const r = runCheck(karpenterVersion, f)
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]?.message ?? '', /could not read kube:list secrets kube-system/)
})

test('a failed legacy read leaves that question unknown', () => {
  const f = healthyFacts((f) => {
    f.kube.legacy = failed('kube:list provisioners')
  })
  const r = runCheck(karpenterVersion, f)
  assert.equal(r.status, 'unknown')
  assert.deepEqual(
    r.findings.map((x) => x.status),
    ['pass', 'unknown'],
  )
})

test('an unreadable chart version is unknown', () => {
  const r = runCheck(karpenterVersion, withRelease('main'))
  assert.equal(r.status, 'unknown')
})
