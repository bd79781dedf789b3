// The conditions helm-release judges, one at a time (issue 12, item 8: mutation testing): the
// release status, the cluster name, the CRDs and the Kubernetes version, each finding exact.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { helmRelease } from '../../../src/checks/helm-release.js'
import { runCheck } from '../../../src/checks/run.js'
import type { CustomResourceDefinition, Facts, HelmRelease } from '../../../src/facts/types.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

const release = (f: Facts): HelmRelease => {
  if (!f.kube.release.ok || !f.kube.release.value) throw new Error('fixture has no release')
  return f.kube.release.value
}
const crds = (f: Facts): CustomResourceDefinition[] => {
  assert.ok(f.kube.crds.ok)
  return f.kube.crds.value
}
const setKubernetes = (version: string) => (f: Facts) => {
  if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.version = version
}
const withChart = (version: string) => (f: Facts) => {
  release(f).chartVersion = version
  release(f).appVersion = version
}
const both =
  (...fns: ((f: Facts) => void)[]) =>
  (f: Facts) =>
    fns.forEach((fn) => fn(f))

const run = (fn?: (f: Facts) => void) => runCheck(helmRelease, healthyFacts(fn)).findings
const UPGRADE = 'helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system'
const CRD_UPGRADE = (v: string) =>
  `helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --namespace kube-system --version ${v}`
const NAMES = 'nodepools.karpenter.sh nodeclaims.karpenter.sh ec2nodeclasses.karpenter.k8s.aws'
const ADOPT = [
  `kubectl label crd ${NAMES} app.kubernetes.io/managed-by=Helm --overwrite`,
  `kubectl annotate crd ${NAMES} meta.helm.sh/release-name=karpenter-crd meta.helm.sh/release-namespace=kube-system --overwrite`,
]
const served = (f: Facts) =>
  crds(f).map((c) => ({
    name: c.name,
    servedVersions: c.servedVersions,
    storageVersion: c.storageVersion,
    chartVersion: undefined,
  }))

test('helm-release is an error-severity helm check', () => {
  assert.equal(helmRelease.meta.id, 'helm-release')
  assert.equal(helmRelease.meta.severity, 'error')
  assert.equal(helmRelease.meta.category, 'helm')
})

test('healthy: the four passes, exactly', () => {
  const facts = healthyFacts()
  assert.deepEqual(runCheck(helmRelease, facts).findings, [
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message: 'release kube-system/karpenter revision 1 is deployed',
      evidence: { status: 'deployed', revision: 1, chartVersion: '1.14.1' },
    },
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message: 'settings.clusterName of kube-system/karpenter is demo',
      evidence: { 'settings.clusterName': 'demo' },
    },
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message:
        'CRDs nodepools.karpenter.sh, nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws serve v1 as chart 1.14.1 needs',
      evidence: { crds: served(facts) },
    },
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message: 'Karpenter 1.14.1 supports Kubernetes 1.34 (1.25–1.34)',
      evidence: {
        karpenter: '1.14.1',
        kubernetes: '1.34',
        source: 'eks:DescribeCluster',
        supported: { since: '1.7.0', minKubernetes: '1.25', maxKubernetes: '1.34' },
      },
    },
  ])
})

// ---- release status ----

test('a failed upgrade (revision 3): the exact fail, rolled back and upgraded again', () => {
  const [f] = run((f) => Object.assign(release(f), { status: 'failed', revision: 3 }))
  assert.deepEqual(f, {
    status: 'fail',
    subject: 'kube-system/karpenter',
    message:
      'release kube-system/karpenter is in status failed (revision 3), not deployed: the last Helm operation did not complete',
    evidence: { status: 'failed', revision: 3, chartVersion: '1.14.1' },
    fix: {
      summary:
        'read the history for the failed revision, roll back to the last deployed one, then upgrade again with --wait to see the error',
      commands: [
        'helm history karpenter --namespace kube-system',
        'helm rollback karpenter --namespace kube-system --wait',
        `${UPGRADE} --version 1.14.1 --reuse-values --wait`,
      ],
    },
  })
})

test('revision 2 stuck in pending-upgrade: rolled back, not removed', () => {
  const [f] = run((f) => Object.assign(release(f), { status: 'pending-upgrade', revision: 2 }))
  assert.equal(
    f!.message,
    'release kube-system/karpenter is stuck in pending-upgrade (revision 2): Helm refuses further upgrades ("another operation is in progress") until it is rolled back',
  )
  assert.equal(
    f!.fix!.summary,
    'when no helm command is still running against it, roll the release back to its last deployed revision, then upgrade again',
  )
  assert.equal(f!.fix!.commands![1], 'helm rollback karpenter --namespace kube-system --wait')
})

test('a first install stuck in pending-install: removed and installed again, exactly', () => {
  const [f] = run((f) => Object.assign(release(f), { status: 'pending-install', revision: 1 }))
  assert.equal(
    f!.message,
    'release kube-system/karpenter is stuck in pending-install (revision 1): Helm refuses further upgrades ("another operation is in progress") until it is removed',
  )
  assert.deepEqual(f!.fix, {
    summary:
      'when no helm command is still running against it, remove the unfinished first install and install again (add your own --set/-f values)',
    commands: [
      'helm history karpenter --namespace kube-system',
      'helm uninstall karpenter --namespace kube-system',
      'helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.14.1 --namespace kube-system --create-namespace --set settings.clusterName=demo --wait',
    ],
  })
})

// ---- cluster name ----

test('another cluster name: the exact fail and its fix', () => {
  const [, f] = run((f) => (release(f).computedValues.settings = { clusterName: 'prod' }))
  assert.deepEqual(f, {
    status: 'fail',
    subject: 'kube-system/karpenter',
    message:
      'settings.clusterName of release kube-system/karpenter is "prod", but this cluster is demo: the controller discovers the wrong cluster (endpoint, subnets, instances tagged for another cluster)',
    evidence: { 'settings.clusterName': 'prod', clusterName: 'demo' },
    fix: {
      summary: 'set settings.clusterName to demo',
      commands: [`${UPGRADE} --version 1.14.1 --reuse-values --set settings.clusterName=demo`],
    },
  })
})

test('the cluster name unset, null or empty: not set, with null as evidence', () => {
  for (const clusterName of [undefined, null, '']) {
    const [, f] = run((f) => (release(f).computedValues.settings = { clusterName }))
    assert.equal(
      f!.message,
      'settings.clusterName is not set in release kube-system/karpenter: the controller cannot discover cluster demo',
      String(clusterName),
    )
    assert.deepEqual(f!.evidence, { 'settings.clusterName': clusterName ?? null, clusterName: 'demo' })
  }
})

test('a cluster name that is not a string is shown as JSON', () => {
  const [, f] = run((f) => (release(f).computedValues.settings = { clusterName: 42 }))
  assert.match(
    f!.message,
    /^settings\.clusterName of release kube-system\/karpenter is 42, but this cluster is demo/,
  )
})

test('v0.x: settings.aws.clusterName only when settings.clusterName is unset or empty', () => {
  const v0 = (settings: Record<string, unknown>) =>
    both(withChart('0.31.0'), setKubernetes('1.27'), (f) => (release(f).computedValues.settings = settings))
  assert.equal(
    run(v0({ clusterName: '', aws: { clusterName: 'demo' } }))[1]!.message,
    'settings.aws.clusterName of kube-system/karpenter is demo',
  )
  assert.equal(
    run(v0({ clusterName: 'demo', aws: { clusterName: 'other' } }))[1]!.message,
    'settings.clusterName of kube-system/karpenter is demo',
  )
  // v1 never reads settings.aws.
  assert.equal(
    run((f) => (release(f).computedValues.settings = { aws: { clusterName: 'demo' } }))[1]!.message,
    'settings.clusterName is not set in release kube-system/karpenter: the controller cannot discover cluster demo',
  )
})

// ---- CRDs ----

test('an unreadable chart version: the CRD and Kubernetes parts are skipped, saying why', () => {
  const f = run((f) => {
    release(f).chartVersion = 'latest'
    release(f).appVersion = 'main'
  })
  assert.deepEqual(f.slice(2), [
    { status: 'skipped', message: 'chart version "latest" is not readable' },
    { status: 'skipped', message: 'chart version "latest" is not readable' },
  ])
})

test('a v0.x chart: the CRD part is left to karpenter-version', () => {
  const f = run(both(withChart('0.37.0'), setKubernetes('1.29')))
  assert.deepEqual(f[2], {
    status: 'skipped',
    message: 'Karpenter 0.37.0 is a v0.x install: karpenter-version explains its CRD migration',
  })
})

test('two CRDs missing: the exact fail, plural, with install commands for the CRD chart', () => {
  const f = run((f) => (f.kube.crds = ok(crds(f).filter((c) => c.name === 'nodepools.karpenter.sh'))))[2]!
  assert.deepEqual(f, {
    status: 'fail',
    subject: 'nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws',
    message:
      'CRDs nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws missing: chart 1.14.1 (kube-system/karpenter) cannot run without them',
    evidence: {
      missing: ['nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws'],
      crds: [
        {
          name: 'nodepools.karpenter.sh',
          servedVersions: ['v1'],
          storageVersion: 'v1',
          chartVersion: undefined,
        },
      ],
    },
    fix: {
      summary: 'install the CRDs of 1.14.1 with the karpenter-crd chart',
      commands: [
        'kubectl label crd nodepools.karpenter.sh app.kubernetes.io/managed-by=Helm --overwrite',
        'kubectl annotate crd nodepools.karpenter.sh meta.helm.sh/release-name=karpenter-crd meta.helm.sh/release-namespace=kube-system --overwrite',
        CRD_UPGRADE('1.14.1'),
      ],
    },
  })
})

test('one CRD missing: singular', () => {
  const f = run((f) => (f.kube.crds = ok(crds(f).filter((c) => c.name !== 'nodeclaims.karpenter.sh'))))[2]!
  assert.equal(
    f.message,
    'CRD nodeclaims.karpenter.sh missing: chart 1.14.1 (kube-system/karpenter) cannot run without it',
  )
})

test('other CRDs of the cluster are not Karpenter CRDs', () => {
  const f = run((f) => {
    f.kube.crds = ok([
      ...crds(f),
      {
        name: 'nodeoverlays.karpenter.sh',
        group: 'karpenter.sh',
        servedVersions: ['v1alpha1'],
        storageVersion: 'v1alpha1',
        labels: {},
        annotations: {},
      },
    ])
  })[2]!
  assert.equal(f.status, 'pass')
  assert.equal((f.evidence?.crds as unknown[]).length, 3)
})

test('CRDs without v1: the exact fail, listing what they serve once', () => {
  const f = run((f) => {
    for (const c of crds(f)) c.servedVersions = ['v1beta1', 'v1alpha5']
  })[2]!
  assert.equal(f.status, 'fail')
  assert.equal(f.subject, 'nodepools.karpenter.sh, nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws')
  assert.equal(
    f.message,
    'nodepools.karpenter.sh, nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws do not serve v1 (only v1beta1, v1alpha5): chart 1.14.1 reads and writes karpenter v1 objects',
  )
  assert.equal((f.evidence?.crds as unknown[]).length, 3)
  assert.deepEqual(f.fix, {
    summary:
      "upgrade the CRDs to 1.14.1 (Helm never upgrades the CRDs in the karpenter chart's crds/ folder)",
    commands: [...ADOPT, CRD_UPGRADE('1.14.1')],
  })
})

test('v1 CRDs that still serve v1beta1 under a v1 chart: the exact warning', () => {
  const facts = healthyFacts((f) => {
    for (const c of crds(f)) c.servedVersions = ['v1', 'v1beta1']
  })
  const f = runCheck(helmRelease, facts).findings[2]!
  assert.deepEqual(f, {
    status: 'warn',
    subject: 'nodepools.karpenter.sh, nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws',
    message:
      'nodepools.karpenter.sh, nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws still serve v1beta1 through a conversion webhook, as in v1.0.x, but chart 1.14.1 runs no webhook: conversions fail and fields added since v1.0 are pruned',
    evidence: { crds: served(facts) },
    fix: { summary: 'upgrade the CRDs to 1.14.1', commands: [...ADOPT, CRD_UPGRADE('1.14.1')] },
  })
})

test('chart 1.0.x with CRDs that no longer serve v1beta1: the exact warning naming those CRDs', () => {
  const f = run(
    both(withChart('1.0.14'), setKubernetes('1.31'), (f) => {
      for (const c of crds(f))
        c.servedVersions = c.name === 'nodepools.karpenter.sh' ? ['v1', 'v1beta1'] : ['v1']
    }),
  )[2]!
  assert.equal(f.status, 'warn')
  assert.equal(f.subject, 'nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws')
  assert.equal(
    f.message,
    'chart 1.0.14 is v1.0.x but some CRDs no longer serve v1beta1: they come from a newer chart',
  )
  assert.equal((f.evidence?.crds as unknown[]).length, 3)
  assert.deepEqual(f.fix, {
    summary: 'align the CRDs with 1.0.14, or better, upgrade the chart to v1.1+',
    commands: [
      ...ADOPT,
      `${CRD_UPGRADE('1.0.14')} --set webhook.enabled=true --set webhook.serviceName=karpenter --set webhook.port=8443`,
    ],
  })
})

test('chart 1.0.x with every CRD missing: only the missing-CRD fail', () => {
  const f = run(both(withChart('1.0.14'), setKubernetes('1.31'), (f) => (f.kube.crds = ok([]))))
  assert.deepEqual(
    f.map((x) => x.status),
    ['pass', 'pass', 'fail', 'pass'],
  )
})

test('CRD chart versions that differ: the exact warning; a v-prefixed chart version is compared without its v', () => {
  const facts = healthyFacts((f) => {
    for (const c of crds(f)) {
      c.labels['app.kubernetes.io/version'] = c.name === 'nodepools.karpenter.sh' ? '1.13.0' : 'v1.14.1'
      c.annotations['meta.helm.sh/release-name'] = 'karpenter-crd'
    }
    release(f).chartVersion = 'v1.14.1'
  })
  const f = runCheck(helmRelease, facts).findings[2]!
  assert.deepEqual(f, {
    status: 'warn',
    subject: 'nodepools.karpenter.sh',
    message: 'CRD versions nodepools.karpenter.sh=1.13.0 differ from chart v1.14.1 (kube-system/karpenter)',
    evidence: {
      chartVersion: 'v1.14.1',
      crds: [
        {
          name: 'nodepools.karpenter.sh',
          servedVersions: ['v1'],
          storageVersion: 'v1',
          chartVersion: '1.13.0',
        },
      ],
    },
    fix: { summary: 'install the CRDs of the running chart, v1.14.1', commands: [CRD_UPGRADE('v1.14.1')] },
  })
})

// ---- Kubernetes version ----

test('Kubernetes older than supported: the exact fail, one minor up', () => {
  const f = run(setKubernetes('1.23'))[3]!
  assert.deepEqual(f, {
    status: 'fail',
    subject: 'demo',
    message:
      'Kubernetes 1.23 is older than Karpenter 1.14.1 accepts (1.25–1.34): the controller refuses to start',
    evidence: {
      karpenter: '1.14.1',
      kubernetes: '1.23',
      source: 'eks:DescribeCluster',
      supported: { since: '1.7.0', minKubernetes: '1.25', maxKubernetes: '1.34' },
    },
    fix: {
      summary: 'upgrade the cluster one minor at a time to at least 1.25',
      commands: ['aws eks update-cluster-version --name demo --kubernetes-version 1.24 --region us-west-2'],
    },
  })
})

test('Kubernetes newer than a reviewed Karpenter supports: the exact fail, upgrading CRDs and chart', () => {
  const f = run(both(withChart('1.4.0'), setKubernetes('1.33')))[3]!
  assert.deepEqual(f, {
    status: 'fail',
    subject: 'kube-system/karpenter',
    message:
      'Karpenter 1.4.0 supports Kubernetes 1.25–1.32, but cluster demo runs 1.33: the controller validates the version at start-up and may refuse to run, and node images for 1.33 may not resolve',
    evidence: {
      karpenter: '1.4.0',
      kubernetes: '1.33',
      source: 'eks:DescribeCluster',
      supported: { since: '1.2.0', minKubernetes: '1.25', maxKubernetes: '1.32' },
    },
    fix: {
      summary: 'upgrade the CRDs and the chart (Karpenter 1.5.0+ supports Kubernetes 1.33)',
      commands: [...ADOPT, CRD_UPGRADE('1.14.1'), `${UPGRADE} --version 1.14.1 --reset-then-reuse-values`],
    },
  })
})

test('Kubernetes newer than any Karpenter of the table: the fail says so, with no commands', () => {
  const f = run(both(withChart('1.4.0'), setKubernetes('1.40')))[3]!
  assert.equal(f.status, 'fail')
  assert.deepEqual(f.fix, {
    summary:
      "no Karpenter version in karpctl's table supports Kubernetes 1.40 yet: check https://karpenter.sh/docs/upgrading/compatibility/",
    commands: [],
  })
})

test('a v0.x Karpenter on a too-new Kubernetes: the staged upgrade path, no commands', () => {
  const f = run(both(withChart('0.37.0'), setKubernetes('1.31')))[3]!
  assert.equal(f.status, 'fail')
  assert.equal(f.fix!.commands!.length, 0)
  assert.match(
    f.fix!.summary,
    /^Karpenter 1\.0\.5\+ supports Kubernetes 1\.31; from 0\.37\.0 upgrade in stages: 1\) move to the latest patch of your v0\.3x minor, then to v1\.0\.x/,
  )
})

test('the too-new fix adopts only the Karpenter CRDs, and none when the CRDs could not be read', () => {
  const f = run(
    both(withChart('1.4.0'), setKubernetes('1.33'), (f) => (f.kube.crds = failed('list crds'))),
  )[3]!
  assert.deepEqual(f.fix!.commands, [
    CRD_UPGRADE('1.14.1'),
    `${UPGRADE} --version 1.14.1 --reset-then-reuse-values`,
  ])
})

test('a Karpenter newer than the table on a newer Kubernetes: the exact warning', () => {
  const f = run(both(withChart('1.15.2'), setKubernetes('1.35')))[3]!
  assert.deepEqual(f, {
    status: 'warn',
    subject: 'kube-system/karpenter',
    message:
      "Karpenter 1.15.2 is newer than karpctl's compatibility table (supported through 1.34 for the versions it knows): cannot confirm support for Kubernetes 1.35",
    evidence: {
      karpenter: '1.15.2',
      kubernetes: '1.35',
      source: 'eks:DescribeCluster',
      supported: { since: '1.7.0', minKubernetes: '1.25', maxKubernetes: '1.34' },
    },
    fix: { summary: 'check https://karpenter.sh/docs/upgrading/compatibility/ for Karpenter 1.15' },
  })
})

test('a Karpenter older than the table: unknown, exactly', () => {
  const f = run(both(withChart('0.20.0'), setKubernetes('1.24')))[3]!
  assert.deepEqual(f, {
    status: 'unknown',
    subject: 'kube-system/karpenter',
    message:
      "Karpenter 0.20.0 predates karpctl's compatibility table: cannot tell whether it supports Kubernetes 1.24",
    evidence: {
      karpenter: '0.20.0',
      kubernetes: '1.24',
      source: 'eks:DescribeCluster',
      supported: undefined,
    },
  })
})

test('EKS without a version: the API server version is used; neither: skipped; unreadable: skipped with it', () => {
  const noEks = (f: Facts) => {
    if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.version = ''
  }
  const fromServer = run(both(noEks, (f) => (f.kube.serverVersion = ok('v1.30.2'))))[3]!
  assert.equal(fromServer.message, 'Karpenter 1.14.1 supports Kubernetes 1.30 (1.25–1.34)')
  assert.equal(fromServer.evidence?.source, 'kube-apiserver /version')
  assert.equal(fromServer.evidence?.kubernetes, 'v1.30.2')
  assert.deepEqual(run(both(noEks, (f) => (f.kube.serverVersion = ok(null))))[3], {
    status: 'skipped',
    message: 'the Kubernetes version is not known (neither EKS nor the API server reported it)',
  })
  assert.deepEqual(run(setKubernetes('next'))[3], {
    status: 'skipped',
    message: 'the Kubernetes version "next" is not readable',
  })
})

test('a chart version with a v inside (1.14.1-dev) matches CRDs labelled the same', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => {
      release(f).chartVersion = '1.14.1-dev'
      for (const c of crds(f)) c.labels['app.kubernetes.io/version'] = '1.14.1-dev'
    }),
  )
  assert.equal(r.findings[2]!.status, 'pass')
})

test('a CRD warning replaces the CRD pass: one finding per part', () => {
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => {
      for (const c of crds(f)) c.servedVersions = ['v1', 'v1beta1']
    }),
  )
  assert.deepEqual(
    r.findings.map((x) => x.status),
    ['pass', 'pass', 'warn', 'pass'],
  )
})

test('the too-new fix adopts only the Karpenter CRDs, not the other CRDs of the cluster', () => {
  const f = run(
    both(withChart('1.4.0'), setKubernetes('1.33'), (f) => {
      f.kube.crds = ok([
        ...crds(f),
        {
          name: 'certificates.cert-manager.io',
          group: 'cert-manager.io',
          servedVersions: ['v1'],
          storageVersion: 'v1',
          labels: {},
          annotations: {},
        },
      ])
    }),
  )[3]!
  assert.deepEqual(f.fix!.commands, [
    ...ADOPT,
    CRD_UPGRADE('1.14.1'),
    `${UPGRADE} --version 1.14.1 --reset-then-reuse-values`,
  ])
})

test('two CRDs of other chart versions: both named in the subject and the message', () => {
  const f = run((f) => {
    for (const c of crds(f))
      if (c.name !== 'ec2nodeclasses.karpenter.k8s.aws') c.labels['app.kubernetes.io/version'] = '1.13.0'
  })[2]!
  assert.equal(f.subject, 'nodepools.karpenter.sh, nodeclaims.karpenter.sh')
  assert.equal(
    f.message,
    'CRD versions nodepools.karpenter.sh=1.13.0, nodeclaims.karpenter.sh=1.13.0 differ from chart 1.14.1 (kube-system/karpenter)',
  )
})
