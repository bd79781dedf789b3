// What lib/install reads off an install, one rule at a time (issue 12, item 8: mutation testing): the
// Karpenter CRDs, the generation the CRDs and legacy objects point to, the version in a controller
// image or a CRD's labels, where the controller runs, and the exact helm/kubectl commands the fixes
// print (install, upgrade, the CRD chart with adoption and the 1.0.x webhook, the staged upgrade path).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseVersion, type KarpenterVersion } from '../../../../src/checks/lib/facts.js'
import {
  controllerDeploymentName,
  controllerNamespace,
  crdChartCommands,
  crdChartVersion,
  crdGeneration,
  generationOf,
  hasLegacyObjects,
  helmInstallCommand,
  helmUpgradeCommand,
  imageVersion,
  karpenterCrds,
  upgradePath,
} from '../../../../src/checks/lib/install.js'
import type { Facts, HelmRelease } from '../../../../src/facts/types.js'
import { healthyFacts, ok } from '../../../helpers/facts.js'
import { crd } from '../../../helpers/check-fixtures.js'

const v = (s: string) => parseVersion(s) as KarpenterVersion
const NONE = { provisioners: [], awsNodeTemplates: [] }
const release = (over: Partial<HelmRelease> = {}): HelmRelease => {
  const f = healthyFacts()
  assert.ok(f.kube.release.ok && f.kube.release.value)
  return { ...f.kube.release.value, ...over }
}

test('karpenterCrds keeps the two Karpenter groups only', () => {
  const crds = [
    crd('nodepools.karpenter.sh'),
    crd('ec2nodeclasses.karpenter.k8s.aws'),
    crd('certificates.cert-manager.io'),
  ]
  assert.deepEqual(
    karpenterCrds([...crds, crd('x.sub.karpenter.sh')]).map((c) => c.name),
    ['nodepools.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws'],
  )
})

test('hasLegacyObjects: a Provisioner or an AWSNodeTemplate is enough', () => {
  assert.equal(hasLegacyObjects(NONE), false)
  assert.equal(hasLegacyObjects({ provisioners: ['p'], awsNodeTemplates: [] }), true)
  assert.equal(hasLegacyObjects({ provisioners: [], awsNodeTemplates: ['t'] }), true)
})

test('crdGeneration: the oldest sign wins', () => {
  const v1 = crd('nodepools.karpenter.sh', ['v1'])
  assert.equal(crdGeneration([v1]), 'v1')
  assert.equal(crdGeneration([v1], NONE), 'v1')
  assert.equal(crdGeneration([v1], { provisioners: [], awsNodeTemplates: ['t'] }), 'v1alpha5')
  assert.equal(crdGeneration([v1, crd('machines.karpenter.sh', ['v1'])]), 'v1alpha5')
  assert.equal(crdGeneration([v1, crd('provisioners.karpenter.sh', ['v1alpha5'])]), 'v1alpha5')
  assert.equal(crdGeneration([crd('nodepools.karpenter.sh', ['v1', 'v1beta1'])]), 'v1.0')
  assert.equal(crdGeneration([crd('nodepools.karpenter.sh', ['v1beta1'])]), 'v1beta1')
  assert.equal(crdGeneration([crd('nodepools.karpenter.sh', ['v1beta1']), v1]), 'v1.0')
  assert.equal(crdGeneration([crd('nodeoverlays.karpenter.sh', ['v1alpha1'])]), null)
  assert.equal(crdGeneration([]), null)
})

test('crdGeneration reads Karpenter CRDs only', () => {
  assert.equal(crdGeneration([crd('provisioners.example.com', ['v1alpha5'])]), null)
  assert.equal(crdGeneration([crd('nodepools.example.com', ['v1beta1'])]), null)
  assert.equal(crdGeneration([crd('nodepools.example.com', ['v1'])]), null)
  assert.equal(crdGeneration([crd('machines.karpenter.sh', ['v1'], { group: 'example.com' })]), null)
})

test('generationOf: v0.32 starts v1beta1, v1.0.x is the conversion line, 1.1 and 2.0 are v1', () => {
  assert.equal(generationOf(v('0.31.9')), 'v1alpha5')
  assert.equal(generationOf(v('0.32.0')), 'v1beta1')
  assert.equal(generationOf(v('1.0.0')), 'v1.0')
  assert.equal(generationOf(v('1.1.0')), 'v1')
  assert.equal(generationOf(v('2.0.0')), 'v1')
})

test('imageVersion: the tag, with or without v and a digest; none without a x.y.z tag', () => {
  assert.deepEqual(imageVersion('public.ecr.aws/karpenter/controller:1.14.1@sha256:abc'), v('1.14.1'))
  assert.deepEqual(imageVersion('public.ecr.aws/karpenter/controller:v0.30.0-rc.1'), v('v0.30.0-rc.1'))
  assert.deepEqual(imageVersion('registry:5000/karpenter:1.2.3'), v('1.2.3'))
  assert.deepEqual(imageVersion('registry.local/karpenter:10.2.3'), v('10.2.3'))
  assert.equal(imageVersion('public.ecr.aws/karpenter/controller:latest'), null)
  assert.equal(imageVersion('public.ecr.aws/karpenter/controller:1.14'), null)
  assert.equal(imageVersion('public.ecr.aws/karpenter/controller:x1.14.1'), null)
  assert.equal(imageVersion('public.ecr.aws/karpenter/controller:1.14.1x@sha256:abc')?.raw, '1.14.1x')
  assert.equal(imageVersion(undefined), null)
})

test('crdChartVersion: the version label, else the annotation, else the chart label', () => {
  const withMeta = (labels: Record<string, string>, annotations: Record<string, string> = {}) =>
    crdChartVersion(crd('nodepools.karpenter.sh', ['v1'], { labels, annotations }))
  assert.equal(withMeta({ 'app.kubernetes.io/version': 'v1.2.3' }), '1.2.3')
  assert.equal(withMeta({ 'app.kubernetes.io/version': '1.2.3v' }), '1.2.3v')
  assert.equal(
    withMeta({ 'app.kubernetes.io/version': '1.2.3' }, { 'app.kubernetes.io/version': '9.9.9' }),
    '1.2.3',
  )
  assert.equal(withMeta({}, { 'app.kubernetes.io/version': 'v9.9.9' }), '9.9.9')
  assert.equal(withMeta({ 'helm.sh/chart': 'karpenter-crd-1.4.0' }), '1.4.0')
  assert.equal(withMeta({ 'helm.sh/chart': 'karpenter-1.4.0' }), undefined)
  assert.equal(withMeta({ 'helm.sh/chart': 'my-karpenter-crd-1.4.0' }), undefined)
  assert.equal(withMeta({}), undefined)
})

test('controllerNamespace and controllerDeploymentName: the release, else the Deployment, else the defaults', () => {
  const ns = (fn: (f: Facts) => void) => controllerNamespace(healthyFacts(fn))
  const name = (fn: (f: Facts) => void) => controllerDeploymentName(healthyFacts(fn))
  const deploy = (metadata: { name: string; namespace?: string }) => (f: Facts) => {
    if (f.kube.deployment.ok && f.kube.deployment.value) f.kube.deployment.value.metadata = metadata
  }
  const rel = (over: Partial<HelmRelease>) => (f: Facts) => {
    if (f.kube.release.ok && f.kube.release.value) Object.assign(f.kube.release.value, over)
  }
  assert.equal(
    ns((f) => (rel({ namespace: 'kr' })(f), deploy({ name: 'd', namespace: 'kd' })(f))),
    'kr',
  )
  assert.equal(
    ns((f) => ((f.kube.release = ok(null)), deploy({ name: 'd', namespace: 'kd' })(f))),
    'kd',
  )
  assert.equal(
    ns((f) => ((f.kube.release = ok(null)), (f.kube.deployment = ok(null)))),
    'kube-system',
  )
  assert.equal(
    name((f) => (rel({ name: 'r' })(f), deploy({ name: 'd' })(f))),
    'd',
  )
  assert.equal(
    name((f) => (rel({ name: 'r' })(f), (f.kube.deployment = ok(null)))),
    'r',
  )
  assert.equal(
    name((f) => ((f.kube.release = ok(null)), (f.kube.deployment = ok(null)))),
    'karpenter',
  )
})

test('helmInstallCommand: the defaults, and a cluster name quoted for the shell', () => {
  assert.equal(
    helmInstallCommand('demo'),
    'helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.14.1 --namespace kube-system --create-namespace --set settings.clusterName=demo --wait',
  )
  assert.equal(
    helmInstallCommand("my cluster's", '1.2.0', 'karpenter', 'kp'),
    `helm upgrade --install kp oci://public.ecr.aws/karpenter/karpenter --version 1.2.0 --namespace karpenter --create-namespace --set settings.clusterName='my cluster'\\''s' --wait`,
  )
})

test('helmUpgradeCommand keeps the values and appends the extra flags', () => {
  const r = release({ name: 'kp', namespace: 'karpenter', chartVersion: '1.5.0' })
  assert.equal(
    helmUpgradeCommand(r, '1.5.0'),
    'helm upgrade kp oci://public.ecr.aws/karpenter/karpenter --namespace karpenter --version 1.5.0 --reuse-values',
  )
  assert.equal(
    helmUpgradeCommand(r, '1.5.0', ' --set a=b'),
    'helm upgrade kp oci://public.ecr.aws/karpenter/karpenter --namespace karpenter --version 1.5.0 --reuse-values --set a=b',
  )
})

test("helmUpgradeCommand to another version takes the new chart's defaults, then the user's values", () => {
  // --reuse-values from 1.0.14 to 1.14.1 failed on the bed: `.Values.service.annotations`, nil pointer
  const r = release({ name: 'kp', namespace: 'karpenter', chartVersion: '1.0.14' })
  assert.equal(
    helmUpgradeCommand(r, '1.14.1'),
    'helm upgrade kp oci://public.ecr.aws/karpenter/karpenter --namespace karpenter --version 1.14.1 --reset-then-reuse-values',
  )
})

test('crdChartCommands past 1.0 removes the 1.0.x conversion webhook Helm adoption keeps; to 1.0.x it stays', () => {
  // The field corpus replayed the printed upgrade 1.0.14 → 1.14.1: the CRDs kept the webhook on 8443,
  // which the 1.14.1 controller does not serve (aws/karpenter-provider-aws#6544).
  const hooked = crd('nodepools.karpenter.sh', ['v1', 'v1beta1'], {
    conversion: { strategy: 'Webhook', service: { namespace: 'kube-system', name: 'karpenter', port: 8443 } },
  })
  const plain = crd('nodeclaims.karpenter.sh', ['v1'], {
    annotations: { 'meta.helm.sh/release-name': 'karpenter-crd' },
  })
  const patch = `kubectl patch crd nodepools.karpenter.sh --type merge -p '{"spec":{"conversion":{"strategy":"None","webhook":null}}}'`
  const to114 = crdChartCommands('kube-system', '1.14.1', [hooked, plain])
  assert.equal(to114.at(-1), patch)
  assert.equal(to114.filter((c) => c.startsWith('kubectl patch')).length, 1)
  assert.ok(!crdChartCommands('kube-system', '1.0.14', [hooked, plain]).includes(patch))
})

test('crdChartCommands: CRDs not yet owned by karpenter-crd are adopted, then the CRD chart', () => {
  const owned = crd('nodeclaims.karpenter.sh', ['v1'], {
    annotations: { 'meta.helm.sh/release-name': 'karpenter-crd' },
  })
  const fromCrdsFolder = crd('nodepools.karpenter.sh', ['v1'], {
    annotations: { 'meta.helm.sh/release-name': 'karpenter' },
  })
  assert.deepEqual(
    crdChartCommands('karpenter', '1.14.1', [fromCrdsFolder, owned, crd('ec2nodeclasses.karpenter.k8s.aws')]),
    [
      'kubectl label crd nodepools.karpenter.sh ec2nodeclasses.karpenter.k8s.aws app.kubernetes.io/managed-by=Helm --overwrite',
      'kubectl annotate crd nodepools.karpenter.sh ec2nodeclasses.karpenter.k8s.aws meta.helm.sh/release-name=karpenter-crd meta.helm.sh/release-namespace=karpenter --overwrite',
      'helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace karpenter --version 1.14.1',
    ],
  )
  assert.deepEqual(crdChartCommands('kube-system', '1.14.1', [owned]), [
    'helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace kube-system --version 1.14.1',
  ])
})

test('crdChartCommands: a 1.0.x CRD chart points its conversion webhook at the controller Service', () => {
  const chart =
    'helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace kube-system'
  const webhook = '--set webhook.enabled=true --set webhook.serviceName=kp --set webhook.port=8443'
  assert.deepEqual(crdChartCommands('kube-system', '1.0.9', [], 'kp'), [
    `${chart} --version 1.0.9 ${webhook}`,
  ])
  assert.deepEqual(crdChartCommands('kube-system', '1.0.9', []), [
    `${chart} --version 1.0.9 ${webhook.replace('=kp', '=karpenter')}`,
  ])
  assert.deepEqual(crdChartCommands('kube-system', '1.1.0', [], 'kp'), [`${chart} --version 1.1.0`])
  assert.deepEqual(crdChartCommands('kube-system', '0.0.9', [], 'kp'), [`${chart} --version 0.0.9`])
  assert.deepEqual(crdChartCommands('kube-system', 'latest', [], 'kp'), [`${chart} --version latest`])
})

test('upgradePath: v1alpha5 has three steps, v1beta1 two, v1.0 one, v1 none', () => {
  const last =
    'upgrade the CRDs, then the chart, to v1.1 or later (latest: 1.14.1); from v1.1 there are no webhooks and no v1beta1'
  const toV1 =
    'move to the latest patch of your v0.3x minor, then to v1.0.x (v1 API; https://karpenter.sh/docs/upgrading/v1-migration/)'
  assert.equal(
    upgradePath('v1alpha5'),
    `1) upgrade to v0.32.x/v0.33.x and migrate Provisioner → NodePool, AWSNodeTemplate → EC2NodeClass, Machine → NodeClaim (v1beta1; https://karpenter.sh/v0.32/upgrading/v1beta1-migration/); 2) ${toV1}; 3) ${last}`,
  )
  assert.equal(upgradePath('v1beta1'), `1) ${toV1}; 2) ${last}`)
  assert.equal(upgradePath('v1.0'), `1) ${last}`)
  assert.equal(upgradePath('v1'), '')
})
