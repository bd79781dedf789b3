// The conditions karpenter-version judges, one at a time (issue 12, item 8: mutation testing): the
// generation of the Helm release (unreadable, v0.x, v1.0.x, current), v0.x objects left behind on a
// v1 install, and, without a release, the controller Deployment's image or the CRDs left half-way.
// Each finding is pinned whole: its status, subject, message, evidence and fix commands.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { karpenterVersion } from '../../../src/checks/karpenter-version.js'
import { generationLabel, upgradePath } from '../../../src/checks/lib/install.js'
import { runCheck } from '../../../src/checks/run.js'
import type { CustomResourceDefinition, Facts, LegacyObjects } from '../../../src/facts/types.js'
import { both, setChartVersion, crd } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

const run = (fn?: (f: Facts) => void) => runCheck(karpenterVersion, healthyFacts(fn)).findings
const withLegacy = (provisioners: string[], awsNodeTemplates: string[]) => (f: Facts) => {
  f.kube.legacy = ok({ provisioners, awsNodeTemplates })
}
const noRelease = (f: Facts) => {
  f.kube.release = ok(null)
}
const noController = (f: Facts) => {
  f.kube.deployment = ok(null)
}
const withImage = (image: string | undefined) => (f: Facts) => {
  if (f.kube.deployment.ok && f.kube.deployment.value) f.kube.deployment.value.image = image
}
const withCrds =
  (...crds: CustomResourceDefinition[]) =>
  (f: Facts) => {
    f.kube.crds = ok(crds)
  }
const V1_NAMES = ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws']
const V1_SERVED = V1_NAMES.map((name) => ({ name, servedVersions: ['v1'] }))
const NO_LEGACY: LegacyObjects = { provisioners: [], awsNodeTemplates: [] }
const RELEASE_EVIDENCE = (v: string) => ({ release: 'kube-system/karpenter', chartVersion: v, appVersion: v })
const BACKUP_V1ALPHA5 =
  'kubectl get provisioners.karpenter.sh,awsnodetemplates.karpenter.k8s.aws -o yaml > karpenter-v1alpha5-backup.yaml'
const BACKUP_V1BETA1 =
  'kubectl get nodepools.karpenter.sh,ec2nodeclasses.karpenter.k8s.aws -o yaml > karpenter-v1beta1-backup.yaml'
// The install a partial removal's fix prints.
const INSTALL =
  'helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.14.1 --namespace kube-system --create-namespace --set settings.clusterName=demo --wait'
test('karpenter-version is an error-severity helm check', () => {
  assert.equal(karpenterVersion.meta.id, 'karpenter-version')
  assert.equal(karpenterVersion.meta.severity, 'error')
  assert.equal(karpenterVersion.meta.category, 'helm')
})

test('a current release: one pass naming the version, with the release as evidence', () => {
  assert.deepEqual(run(), [
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message: 'Karpenter 1.14.1 (Helm release kube-system/karpenter) is a current v1 install',
      evidence: RELEASE_EVIDENCE('1.14.1'),
    },
  ])
})

test('a chart version karpctl cannot read is unknown, quoting it, even with v0.x objects left', () => {
  assert.deepEqual(run(both(setChartVersion('main', 'latest'), withLegacy(['old'], []))), [
    {
      status: 'unknown',
      subject: 'kube-system/karpenter',
      message:
        'Helm release kube-system/karpenter has chart version "main", which is not a version karpctl can read',
      evidence: { chartVersion: 'main', appVersion: 'latest' },
    },
  ])
})

test('v1.0.x: the CRDs of the v1 chart are adopted, the others are left alone', () => {
  const findings = run(
    both(setChartVersion('1.0.14', '1.0.14'), (f) => {
      if (f.kube.crds.ok) f.kube.crds.value.push(crd('nodeoverlays.karpenter.sh', ['v1alpha1']))
    }),
  )
  assert.equal(findings.length, 1)
  assert.deepEqual(findings[0]?.fix?.commands, [
    `kubectl label crd ${V1_NAMES.join(' ')} app.kubernetes.io/managed-by=Helm --overwrite`,
    `kubectl annotate crd ${V1_NAMES.join(' ')} meta.helm.sh/release-name=karpenter-crd meta.helm.sh/release-namespace=kube-system --overwrite`,
    'helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace kube-system --version 1.14.1',
    'helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system --version 1.14.1 --reset-then-reuse-values',
  ])
})

test('v1.0.x with unreadable CRDs still gives the CRD chart and the chart upgrade', () => {
  const findings = run(
    both(setChartVersion('1.0.14', '1.0.14'), (f) => {
      f.kube.crds = failed('kube:list customresourcedefinitions')
    }),
  )
  assert.deepEqual(findings, [
    {
      status: 'warn',
      subject: 'kube-system/karpenter',
      message:
        'Karpenter 1.0.14 (Helm release kube-system/karpenter) is the v1.0.x conversion line: webhooks are disabled, so v1beta1 objects cannot be converted; upgrade to v1.1 or later to end webhooks and v1beta1',
      evidence: { ...RELEASE_EVIDENCE('1.0.14'), webhookEnabled: false },
      fix: {
        summary:
          "run `karpctl upgrade` (it checks that no object is still stored as v1beta1, adds the IAM statements 1.14.1 needs, then upgrades the CRDs and the chart with your values), or by hand: first make sure no manifest or tool still writes karpenter.sh/v1beta1 objects; then upgrade the CRDs and the chart to 1.14.1 (Helm does not upgrade CRDs from the chart's crds/ folder)",
        commands: [
          'helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace kube-system --version 1.14.1',
          'helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system --version 1.14.1 --reset-then-reuse-values',
        ],
      },
    },
  ])
})

test('a v0.30 release (v1alpha5): fail, the staged path and a backup of the v1alpha5 objects', () => {
  assert.deepEqual(run(both(setChartVersion('0.30.0', '0.30.0'), withLegacy(['a', 'b'], ['c', 'd']))), [
    {
      status: 'fail',
      subject: 'Helm release kube-system/karpenter',
      message:
        'Karpenter 0.30.0 (Helm release kube-system/karpenter) is a v0.x install, out of support: it cannot be upgraded to v1 in one step; Provisioners a, b and AWSNodeTemplates c, d still exist',
      evidence: {
        ...RELEASE_EVIDENCE('0.30.0'),
        generation: generationLabel.v1alpha5,
        legacyObjects: { provisioners: ['a', 'b'], awsNodeTemplates: ['c', 'd'] },
      },
      fix: { summary: `upgrade in stages: ${upgradePath('v1alpha5')}`, commands: [BACKUP_V1ALPHA5] },
    },
  ])
})

test('a v0.33 release (v1beta1) with no v0.x objects: the v1beta1 backup, no object list', () => {
  assert.deepEqual(run(setChartVersion('0.33.2', '0.33.2')), [
    {
      status: 'fail',
      subject: 'Helm release kube-system/karpenter',
      message:
        'Karpenter 0.33.2 (Helm release kube-system/karpenter) is a v0.x install, out of support: it cannot be upgraded to v1 in one step',
      evidence: {
        ...RELEASE_EVIDENCE('0.33.2'),
        generation: generationLabel.v1beta1,
        legacyObjects: NO_LEGACY,
      },
      fix: { summary: `upgrade in stages: ${upgradePath('v1beta1')}`, commands: [BACKUP_V1BETA1] },
    },
  ])
})

test('a v0.x release with the v0.x objects unreadable: the verdict stands, without the objects', () => {
  const findings = run(
    both(setChartVersion('0.33.2', '0.33.2'), (f) => {
      f.kube.legacy = failed('kube:list provisioners')
    }),
  )
  assert.equal(findings.length, 1)
  assert.equal(findings[0]?.status, 'fail')
  assert.equal(
    findings[0]?.message,
    'Karpenter 0.33.2 (Helm release kube-system/karpenter) is a v0.x install, out of support: it cannot be upgraded to v1 in one step',
  )
  assert.deepEqual(findings[0]?.evidence, {
    ...RELEASE_EVIDENCE('0.33.2'),
    generation: generationLabel.v1beta1,
  })
})

test('on a v1 release, only AWSNodeTemplates left: one delete for them, then the legacy CRDs', () => {
  const findings = run(withLegacy([], ['t1', 't2']))
  assert.equal(findings.length, 2)
  assert.deepEqual(findings[1], {
    status: 'warn',
    subject: 'v1alpha5 objects',
    message:
      'AWSNodeTemplates t1, t2 remain from a v0.x install: Karpenter 1.14.1 ignores them, so they configure nothing',
    evidence: { legacyObjects: { provisioners: [], awsNodeTemplates: ['t1', 't2'] } },
    fix: {
      summary:
        'once their settings live in NodePools / EC2NodeClasses and no node carries karpenter.sh/provisioner-name, delete them',
      commands: [
        'kubectl delete awsnodetemplates.karpenter.k8s.aws t1 t2',
        'kubectl delete crd provisioners.karpenter.sh machines.karpenter.sh awsnodetemplates.karpenter.k8s.aws --ignore-not-found',
      ],
    },
  })
})

test('on a v1 release, only Provisioners left: no AWSNodeTemplate delete', () => {
  const findings = run(withLegacy(['p1', 'p2'], []))
  assert.equal(findings[1]?.message.startsWith('Provisioners p1, p2 remain from a v0.x install'), true)
  assert.deepEqual(findings[1]?.fix?.commands, [
    'kubectl delete provisioners.karpenter.sh p1 p2',
    'kubectl delete crd provisioners.karpenter.sh machines.karpenter.sh awsnodetemplates.karpenter.k8s.aws --ignore-not-found',
  ])
})

test('a controller without a Helm release (helm template | kubectl apply): its image says 1.14.1, a current install', () => {
  assert.deepEqual(run(noRelease), [
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message:
        'Karpenter 1.14.1 (Deployment kube-system/karpenter, no Helm release: applied as manifests, e.g. helm template | kubectl apply) is a current v1 install',
      evidence: {
        release: 'kube-system/karpenter',
        chartVersion: '1.14.1',
        appVersion: undefined,
        renderedBy: { tool: 'manifests' },
      },
    },
  ])
})

// Argo CD renders the chart with `helm template` and applies the objects: no Helm release
// (argoproj/argo-cd#3867); its annotation tracking marks each object with the Application.
const byArgo = (f: Facts) => {
  if (!f.kube.deployment.ok || !f.kube.deployment.value) return
  const meta = f.kube.deployment.value.metadata
  meta.labels = { ...meta.labels, 'helm.sh/chart': 'karpenter-1.0.14', 'app.kubernetes.io/version': '1.0.14' }
  meta.annotations = { 'argocd.argoproj.io/tracking-id': 'karpenter:apps/Deployment:kube-system/karpenter' }
  // A private mirror of the image, by digest only: the chart's label still says the version.
  f.kube.deployment.value.image =
    '111122223333.dkr.ecr.us-west-2.amazonaws.com/karpenter/controller@sha256:abc'
  f.kube.deployment.value.env = { ...f.kube.deployment.value.env, DISABLE_WEBHOOK: 'false' }
}

test('Argo CD applied a 1.0.14 chart: the v1.0 line, named with its Application, and no helm command', () => {
  const findings = run(both(noRelease, byArgo))
  assert.equal(findings.length, 1)
  assert.equal(findings[0]?.status, 'warn')
  assert.equal(
    findings[0]?.message,
    'Karpenter 1.0.14 (Deployment kube-system/karpenter, no Helm release: Argo CD application "karpenter") is the v1.0.x conversion line: its webhooks on 8443 must be reachable from the control plane; upgrade to v1.1 or later to end webhooks and v1beta1',
  )
  assert.equal(findings[0]?.fix?.commands, undefined)
  assert.match(
    findings[0]?.fix?.summary ?? '',
    /raise the chart version Argo CD application "karpenter" renders to 1\.14\.1/,
  )
})

test('a rendered install read by the collector wins over the Deployment alone (Flux)', () => {
  const findings = run(
    both(noRelease, (f) => {
      f.kube.rendered = ok({
        name: 'karpenter',
        namespace: 'kube-system',
        revision: 0,
        status: 'deployed',
        chartName: 'karpenter',
        chartVersion: '1.13.0',
        values: {},
        computedValues: {},
        renderedBy: { tool: 'flux', name: 'flux-system/karpenter' },
      })
    }),
  )
  assert.equal(findings[0]?.status, 'pass')
  assert.match(
    findings[0]?.message ?? '',
    /^Karpenter 1\.13\.0 \(Deployment kube-system\/karpenter, no Helm release: Flux Kustomization "flux-system\/karpenter"\)/,
  )
})

test('a controller image without a version: named by its image, no helm install (Helm would refuse the objects)', () => {
  const findings = run(both(noRelease, withImage('registry.local/karpenter:latest')))
  assert.equal(findings[0]?.status, 'warn')
  assert.equal(
    findings[0]?.message,
    'Karpenter (image registry.local/karpenter:latest) runs as Deployment kube-system/karpenter with no Helm release, and neither its labels nor its image tag name its version: its generation cannot be judged',
  )
  assert.equal(findings[0]?.fix?.commands, undefined)
})

test('a controller with no image read and v1.0 CRDs: the image is unknown, the v1.0 line is named', () => {
  const findings = run(
    both(noRelease, withImage(undefined), withCrds(...V1_NAMES.map((n) => crd(n, ['v1', 'v1beta1'])))),
  )
  assert.equal(findings[0]?.status, 'warn')
  assert.equal(
    findings[0]?.message,
    'Karpenter (image unknown) runs as Deployment kube-system/karpenter with no Helm release, and neither its labels nor its image tag name its version; it is the v1.0.x webhook/conversion line: upgrade to v1.1 or later',
  )
})

test('a v1.0.x controller image without a release names the v1.0 line', () => {
  const findings = run(both(noRelease, withImage('public.ecr.aws/karpenter/controller:1.0.8')))
  assert.match(
    findings[0]?.message ?? '',
    /^Karpenter 1\.0\.8 \(Deployment .*\) is the v1\.0\.x conversion line/,
  )
})

test('a controller image without a version on v1beta1 CRDs: the v0.x failure, named by generation', () => {
  const findings = run(
    both(
      noRelease,
      withImage('registry.local/karpenter:latest'),
      withCrds(crd('nodepools.karpenter.sh', ['v1beta1'])),
    ),
  )
  assert.deepEqual(findings, [
    {
      status: 'fail',
      subject: 'Deployment kube-system/karpenter',
      message: `Karpenter ${generationLabel.v1beta1} (Deployment kube-system/karpenter) is a v0.x install, out of support: it cannot be upgraded to v1 in one step`,
      evidence: {
        crds: [{ name: 'nodepools.karpenter.sh', servedVersions: ['v1beta1'] }],
        legacyObjects: NO_LEGACY,
        deployment: 'kube-system/karpenter',
        image: 'registry.local/karpenter:latest',
        generation: generationLabel.v1beta1,
      },
      fix: { summary: `upgrade in stages: ${upgradePath('v1beta1')}`, commands: [BACKUP_V1BETA1] },
    },
  ])
})

test('v1 CRDs without a release or controller: fail, reinstall or delete the CRDs', () => {
  assert.deepEqual(run(both(noRelease, noController)), [
    {
      status: 'fail',
      subject: V1_NAMES.join(', '),
      message: `Karpenter is partially installed: CRDs ${V1_NAMES.join(', ')} exist (${generationLabel.v1}), but there is no Helm release and no controller`,
      evidence: { crds: V1_SERVED, legacyObjects: NO_LEGACY, deployment: null, image: undefined },
      fix: {
        summary:
          'either reinstall Karpenter (the CRDs and any NodePools are reused), or remove the leftover CRDs — which deletes every NodePool, NodeClaim and EC2NodeClass; without a controller, objects with finalizers block the deletion',
        commands: [INSTALL, `kubectl delete crd ${V1_NAMES.join(' ')}`],
      },
    },
  ])
})

test('v1beta1 CRDs without a release or controller: the migration path is the fix', () => {
  const findings = run(both(noRelease, noController, withCrds(crd('nodepools.karpenter.sh', ['v1beta1']))))
  assert.equal(findings[0]?.status, 'fail')
  assert.equal(
    findings[0]?.fix?.summary,
    `either remove the leftovers, or reinstall and migrate: ${upgradePath('v1beta1')}`,
  )
})

test('only v0.x objects left, no CRD, release or controller: named by the objects, nothing to delete', () => {
  const findings = run(both(noRelease, noController, withCrds(), withLegacy(['p'], [])))
  assert.deepEqual(findings, [
    {
      status: 'fail',
      subject: 'v1alpha5 objects',
      message: `Karpenter is partially installed: Provisioners p exist (${generationLabel.v1alpha5}), but there is no Helm release and no controller`,
      evidence: {
        crds: [],
        legacyObjects: { provisioners: ['p'], awsNodeTemplates: [] },
        deployment: null,
        image: undefined,
      },
      fix: {
        summary: `either remove the leftovers, or reinstall and migrate: ${upgradePath('v1alpha5')}`,
        commands: [INSTALL],
      },
    },
  ])
})

test('v1alpha5 CRDs and objects without a release or controller: both named, the CRDs deleted', () => {
  const findings = run(
    both(
      noRelease,
      noController,
      withCrds(
        crd('provisioners.karpenter.sh', ['v1alpha5']),
        crd('awsnodetemplates.karpenter.k8s.aws', ['v1alpha1']),
      ),
      withLegacy(['p'], ['t']),
    ),
  )
  assert.equal(findings[0]?.subject, 'provisioners.karpenter.sh, awsnodetemplates.karpenter.k8s.aws')
  assert.equal(
    findings[0]?.message,
    `Karpenter is partially installed: CRDs provisioners.karpenter.sh, awsnodetemplates.karpenter.k8s.aws and Provisioners p and AWSNodeTemplates t exist (${generationLabel.v1alpha5}), but there is no Helm release and no controller`,
  )
  assert.deepEqual(findings[0]?.fix?.commands, [
    INSTALL,
    'kubectl delete crd provisioners.karpenter.sh awsnodetemplates.karpenter.k8s.aws',
  ])
})

test('a Karpenter CRD of no known generation, alone: partially installed, no generation named', () => {
  const findings = run(
    both(noRelease, noController, withCrds(crd('nodeoverlays.karpenter.sh', ['v1alpha1']))),
  )
  assert.equal(
    findings[0]?.message,
    'Karpenter is partially installed: CRDs nodeoverlays.karpenter.sh exist, but there is no Helm release and no controller',
  )
})
