import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Facts, HelmRelease } from '../../../src/facts/types.js'
import { helmRelease } from '../../../src/checks/helm-release.js'
import { runCheck } from '../../../src/checks/run.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

const release = (f: Facts): HelmRelease => {
  if (!f.kube.release.ok || !f.kube.release.value) throw new Error('fixture has no release')
  return f.kube.release.value
}
const setKubernetes = (f: Facts, version: string) => {
  if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.version = version
}
const withChart = (version: string, mutate?: (f: Facts) => void) =>
  healthyFacts((f) => {
    release(f).chartVersion = version
    release(f).appVersion = version
    mutate?.(f)
  })
const findingAbout = (r: ReturnType<typeof runCheck>, re: RegExp) => {
  const found = r.findings.find((f) => re.test(f.message))
  assert.ok(found, `no finding matches ${re}: ${JSON.stringify(r.findings.map((f) => f.message))}`)
  return found
}

test('healthy release passes all four parts', () => {
  const r = runCheck(helmRelease, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.deepEqual(
    r.findings.map((f) => f.status),
    ['pass', 'pass', 'pass', 'pass'],
  )
  findingAbout(r, /revision 1 is deployed/)
  findingAbout(r, /settings\.clusterName of kube-system\/karpenter is demo/)
  findingAbout(r, /serve v1 as chart 1\.14\.1 needs/)
  findingAbout(r, /supports Kubernetes 1\.34 \(1\.25–1\.34\)/)
})

test('a failed release fails with rollback and upgrade advice', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => Object.assign(release(f), { status: 'failed', revision: 3 })),
  )
  assert.equal(r.status, 'fail')
  const f = findingAbout(r, /status failed \(revision 3\)/)
  assert.equal(f.subject, 'kube-system/karpenter')
  assert.deepEqual(f.fix?.commands, [
    'helm history karpenter --namespace kube-system',
    'helm rollback karpenter --namespace kube-system --wait',
    'helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system --version 1.14.1 --reuse-values --wait',
  ])
})

test('a first install stuck in pending-install is uninstalled and installed again', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => Object.assign(release(f), { status: 'pending-install', revision: 1 })),
  )
  assert.equal(r.status, 'fail')
  const f = findingAbout(r, /stuck in pending-install/)
  assert.ok(f.fix?.commands?.includes('helm uninstall karpenter --namespace kube-system'))
  assert.ok(
    f.fix?.commands?.some(
      (c) => c.startsWith('helm upgrade --install karpenter') && c.includes('settings.clusterName=demo'),
    ),
  )
})

test('a failed first install has nothing to roll back to', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => Object.assign(release(f), { status: 'failed', revision: 1 })),
  )
  assert.equal(r.status, 'fail')
  const f = findingAbout(r, /status failed \(revision 1\)/)
  assert.ok(!f.fix?.commands?.some((c) => c.startsWith('helm rollback')))
  assert.ok(f.fix?.commands?.includes('helm uninstall karpenter --namespace kube-system'))
})

test('settings.clusterName naming another cluster fails', () => {
  const f = healthyFacts((f) => {
    release(f).computedValues.settings = { clusterName: 'prod', interruptionQueue: 'demo' }
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'fail')
  const finding = findingAbout(r, /settings\.clusterName of release kube-system\/karpenter is "prod"/)
  assert.deepEqual(finding.evidence, { 'settings.clusterName': 'prod', clusterName: 'demo' })
  assert.match(finding.fix?.commands?.[0] ?? '', /--reuse-values --set settings\.clusterName=demo$/)
})

test('missing settings.clusterName fails', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => (release(f).computedValues.settings = {})),
  )
  assert.equal(r.status, 'fail')
  findingAbout(r, /settings\.clusterName is not set/)
})

test('v0.30 reads settings.aws.clusterName and leaves the CRDs to karpenter-version', () => {
  const f = withChart('0.30.0', (f) => {
    release(f).computedValues.settings = { aws: { clusterName: 'demo' } }
    setKubernetes(f, '1.27')
  })
  const r = runCheck(helmRelease, f)
  findingAbout(r, /settings\.aws\.clusterName of kube-system\/karpenter is demo/)
  assert.ok(r.findings.some((x) => x.status === 'skipped' && /v0\.x install/.test(x.message)))
  findingAbout(r, /0\.30\.0 supports Kubernetes 1\.27/)
  assert.equal(r.status, 'pass')
})

test('a missing CRD fails, naming it', () => {
  const f = healthyFacts((f) => {
    if (f.kube.crds.ok)
      f.kube.crds.value = f.kube.crds.value.filter((c) => c.name !== 'ec2nodeclasses.karpenter.k8s.aws')
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'fail')
  const finding = findingAbout(r, /CRD ec2nodeclasses\.karpenter\.k8s\.aws missing/)
  assert.equal(finding.subject, 'ec2nodeclasses.karpenter.k8s.aws')
  assert.ok(
    finding.fix?.commands
      ?.at(-1)
      ?.startsWith(
        'helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace kube-system --version 1.14.1',
      ),
  )
})

test('v1beta1-only CRDs under a v1 chart fail', () => {
  const f = healthyFacts((f) => {
    if (f.kube.crds.ok) for (const c of f.kube.crds.value) c.servedVersions = ['v1beta1']
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'fail')
  findingAbout(r, /do not serve v1 \(only v1beta1\)/)
})

test('1.0.x CRDs (v1 + v1beta1) under chart 1.14.1 warn and are adopted by karpenter-crd', () => {
  const f = healthyFacts((f) => {
    if (f.kube.crds.ok) for (const c of f.kube.crds.value) c.servedVersions = ['v1', 'v1beta1']
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'warn')
  const finding = findingAbout(r, /still serve v1beta1 through a conversion webhook/)
  const names = 'nodepools.karpenter.sh nodeclaims.karpenter.sh ec2nodeclasses.karpenter.k8s.aws'
  assert.deepEqual(finding.fix?.commands, [
    `kubectl label crd ${names} app.kubernetes.io/managed-by=Helm --overwrite`,
    `kubectl annotate crd ${names} meta.helm.sh/release-name=karpenter-crd meta.helm.sh/release-namespace=kube-system --overwrite`,
    'helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace kube-system --version 1.14.1',
  ])
})

test('chart 1.0.14 with its CRDs passes the CRD part; the CRD chart keeps its webhook', () => {
  const f = withChart('1.0.14', (f) => {
    if (f.kube.crds.ok) for (const c of f.kube.crds.value) c.servedVersions = ['v1', 'v1beta1']
    setKubernetes(f, '1.31')
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'pass')
})

test('CRD chart version label differing from the chart warns', () => {
  const f = healthyFacts((f) => {
    if (f.kube.crds.ok) {
      for (const c of f.kube.crds.value) {
        c.labels['app.kubernetes.io/version'] = '1.13.0'
        c.annotations['meta.helm.sh/release-name'] = 'karpenter-crd'
      }
    }
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'warn')
  const finding = findingAbout(r, /nodepools\.karpenter\.sh=1\.13\.0.*differ from chart 1\.14\.1/)
  // Already owned by the karpenter-crd release: no adoption commands.
  assert.deepEqual(finding.fix?.commands, [
    'helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace kube-system --version 1.14.1',
  ])
})

test('Kubernetes newer than the chart supports fails with an upgrade to 1.14.1', () => {
  const r = runCheck(helmRelease, withChart('1.4.0'))
  assert.equal(r.status, 'fail')
  const finding = findingAbout(
    r,
    /Karpenter 1\.4\.0 supports Kubernetes 1\.25–1\.32, but cluster demo runs 1\.34/,
  )
  assert.match(finding.fix?.summary ?? '', /1\.7\.0\+ supports Kubernetes 1\.34/)
  assert.ok(finding.fix?.commands?.at(-1)?.includes('--version 1.14.1'))
})

test('the table is conservative: 1.6 is not claimed for Kubernetes 1.34', () => {
  const r = runCheck(helmRelease, withChart('1.6.3'))
  assert.equal(r.status, 'fail')
  findingAbout(r, /1\.6\.3 supports Kubernetes 1\.25–1\.33/)
})

test('a Karpenter newer than the table only warns about a newer Kubernetes', () => {
  const f = withChart('1.16.0', (f) => {
    setKubernetes(f, '1.35')
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'warn')
  findingAbout(r, /newer than karpctl's compatibility table/)
})

test('Kubernetes older than the minimum fails with a one-minor cluster upgrade', () => {
  const f = healthyFacts((f) => {
    setKubernetes(f, '1.24')
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'fail')
  const finding = findingAbout(r, /Kubernetes 1\.24 is older/)
  assert.deepEqual(finding.fix?.commands, [
    'aws eks update-cluster-version --name demo --kubernetes-version 1.25 --region us-west-2',
  ])
})

test('without EKS, the API server version is used', () => {
  const f = healthyFacts((f) => {
    f.eks.cluster = failed('eks:DescribeCluster demo')
    f.kube.serverVersion = ok('v1.33.4-eks-1234')
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'pass')
  const finding = findingAbout(r, /supports Kubernetes 1\.33/)
  assert.equal(finding.evidence?.source, 'kube-apiserver /version')
})

test('no version source at all makes that part unknown; the others still report', () => {
  const f = healthyFacts((f) => {
    f.eks.cluster = failed('eks:DescribeCluster demo')
    f.kube.serverVersion = failed('kube:get /version', 'ECONNREFUSED')
  })
  const r = runCheck(helmRelease, f)
  assert.equal(r.status, 'unknown')
  assert.deepEqual(
    r.findings.map((x) => x.status),
    ['pass', 'pass', 'pass', 'unknown'],
  )
})

test('a failed CRD read makes the CRD part unknown', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => (f.kube.crds = failed('kube:list customresourcedefinitions'))),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[2]?.message ?? '', /could not read kube:list customresourcedefinitions/)
})

test('a failed release read is unknown', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => (f.kube.release = failed('kube:list secrets'))),
  )
  assert.equal(r.status, 'unknown')
})

test('no release: skipped', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => (f.kube.release = ok(null))),
  )
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]?.message ?? '', /no Karpenter Helm release/)
})
