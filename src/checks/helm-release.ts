import type { CustomResourceDefinition, Facts, HelmRelease } from '../facts/types.js'
import {
  COMPATIBILITY_URL,
  DEFAULT_KARPENTER_VERSION,
  formatMinor,
  kubernetesSupport,
  minimumKarpenterFor,
  parseKubernetesMinor,
  supportRange,
  type KubernetesMinor,
} from './lib/compat.js'
import {
  appliedBy,
  isRendered,
  need,
  needRelease,
  releaseVersion,
  setting,
  skip,
  valueAt,
  type KarpenterVersion,
} from './lib/facts.js'
import {
  crdChartCommands,
  crdChartVersion,
  generationOf,
  helmInstallCommand,
  helmUpgradeCommand,
  setSettingCommand,
  upgradePath,
  withRenderedNote,
  V1_CRDS,
} from './lib/install.js'
import { optional, part } from './lib/parts.js'
import type { Check, Finding } from './types.js'

export const helmRelease: Check = {
  meta: {
    id: 'helm-release',
    title: 'Karpenter Helm release is deployed, names this cluster and matches its CRDs and Kubernetes',
    category: 'helm',
    severity: 'error',
    docs: `The release is in status deployed, settings.clusterName is this cluster (and settings.clusterEndpoint, when set, its endpoint), the CRDs serve the API the chart needs (Helm never upgrades crds/), and the Kubernetes version is in Karpenter's compatibility matrix (${COMPATIBILITY_URL}).`,
  },
  run(facts) {
    const release = needRelease(facts)
    // With no Helm release there is no status to judge and no CRD chart to agree with.
    const helm = !isRendered(release)
    return withRenderedNote(release, [
      ...(helm ? part(() => releaseStatus(facts, release)) : []),
      ...part(() => clusterName(facts, release)),
      ...part(() => clusterEndpoint(facts, release)),
      ...(helm ? part(() => crdAgreement(facts, release)) : []),
      ...part(() => kubernetesVersion(facts, release)),
    ])
  },
}

const releaseRef = (r: HelmRelease) => `${r.namespace}/${r.name}`
/** A Helm release, or the install another tool applied without one (its settings read from the live objects). */
const installWord = (r: HelmRelease) => (isRendered(r) ? 'the install (no Helm release)' : 'release')

function releaseStatus(facts: Facts, release: HelmRelease): Finding[] {
  const subject = releaseRef(release)
  const evidence = { status: release.status, revision: release.revision, chartVersion: release.chartVersion }
  if (release.status === 'deployed') {
    return [
      {
        status: 'pass',
        subject,
        message: `release ${subject} revision ${release.revision} is deployed`,
        evidence,
      },
    ]
  }
  const history = `helm history ${release.name} --namespace ${release.namespace}`
  const upgrade = helmUpgradeCommand(release, release.chartVersion, ' --wait')
  // A first install that never finished has nothing to roll back to.
  const firstInstall = release.revision <= 1
  const commands = firstInstall
    ? [
        history,
        `helm uninstall ${release.name} --namespace ${release.namespace}`,
        helmInstallCommand(facts.meta.clusterName, release.chartVersion, release.namespace, release.name),
      ]
    : [history, `helm rollback ${release.name} --namespace ${release.namespace} --wait`, upgrade]
  const pending = release.status.startsWith('pending-')
  return [
    {
      status: 'fail',
      subject,
      message: pending
        ? `release ${subject} is stuck in ${release.status} (revision ${release.revision}): Helm refuses further upgrades ("another operation is in progress") until it is ${firstInstall ? 'removed' : 'rolled back'}`
        : `release ${subject} is in status ${release.status} (revision ${release.revision}), not deployed: the last Helm operation did not complete`,
      evidence,
      fix: {
        summary: firstInstall
          ? 'when no helm command is still running against it, remove the unfinished first install and install again (add your own --set/-f values)'
          : pending
            ? 'when no helm command is still running against it, roll the release back to its last deployed revision, then upgrade again'
            : 'read the history for the failed revision, roll back to the last deployed one, then upgrade again with --wait to see the error',
        commands,
      },
    },
  ]
}

/** v0.x before v0.32 kept the name under settings.aws; later charts under settings. */
function configuredClusterName(release: HelmRelease): { key: string; value: unknown } {
  const v = releaseVersion(release)
  const current = setting(release, 'clusterName')
  if (v && v.major === 0 && (current === undefined || current === '')) {
    return {
      key: 'settings.aws.clusterName',
      value: valueAt(release.computedValues, 'settings.aws.clusterName'),
    }
  }
  return { key: 'settings.clusterName', value: current }
}

function clusterName(facts: Facts, release: HelmRelease): Finding[] {
  const expected = facts.meta.clusterName
  const { key, value } = configuredClusterName(release)
  const subject = releaseRef(release)
  if (value === expected) {
    return [
      { status: 'pass', subject, message: `${key} of ${subject} is ${expected}`, evidence: { [key]: value } },
    ]
  }
  const missing = value === undefined || value === null || value === ''
  return [
    {
      status: 'fail',
      subject,
      message: missing
        ? `${key} is not set in ${installWord(release)} ${subject}: the controller cannot discover cluster ${expected}`
        : `${key} of ${installWord(release)} ${subject} is ${JSON.stringify(value)}, but this cluster is ${expected}: the controller discovers the wrong cluster (endpoint, subnets, instances tagged for another cluster)`,
      evidence: { [key]: value ?? null, clusterName: expected },
      fix: {
        summary: `set ${key} to ${expected}`,
        commands: [setSettingCommand(facts, release, key, expected)],
      },
    },
  ]
}

/** Scheme and host, lower-cased, without a trailing slash: how two spellings of one endpoint compare. */
const normalEndpoint = (url: string) => url.trim().replace(/\/+$/, '').toLowerCase()

/**
 * settings.clusterEndpoint, when set, is the API server every node is told to join: one kept from a
 * recreated cluster (aws/karpenter-provider-aws#2423, #1634) launches nodes that never register. Unset
 * (the chart default), the controller discovers it: nothing to judge.
 */
function clusterEndpoint(facts: Facts, release: HelmRelease): Finding[] {
  const value = setting(release, 'clusterEndpoint')
  if (value === undefined || value === null || value === '') return []
  const subject = releaseRef(release)
  const cluster = need(facts.eks.cluster)
  if (!cluster?.endpoint)
    return [
      {
        status: 'unknown',
        subject,
        message: `settings.clusterEndpoint is ${JSON.stringify(value)}, and the cluster's endpoint is not known (${cluster ? 'DescribeCluster gave none' : `cluster ${facts.meta.clusterName} not found`})`,
      },
    ]
  if (typeof value === 'string' && normalEndpoint(value) === normalEndpoint(cluster.endpoint))
    return [
      {
        status: 'pass',
        subject,
        message: `settings.clusterEndpoint of ${subject} is the cluster's endpoint`,
      },
    ]
  return [
    {
      status: 'fail',
      subject,
      message: `settings.clusterEndpoint of ${installWord(release)} ${subject} is ${JSON.stringify(value)}, but cluster ${facts.meta.clusterName}'s endpoint is ${cluster.endpoint}: nodes are told to join another API server and never register`,
      code: 'cluster-endpoint',
      evidence: { 'settings.clusterEndpoint': value, endpoint: cluster.endpoint },
      fix: {
        summary: `set settings.clusterEndpoint to ${cluster.endpoint} (or unset it: the controller discovers it)`,
        commands: [setSettingCommand(facts, release, 'settings.clusterEndpoint', cluster.endpoint)],
      },
    },
  ]
}

function servedSummary(crds: CustomResourceDefinition[]) {
  return crds.map((c) => ({
    name: c.name,
    servedVersions: c.servedVersions,
    storageVersion: c.storageVersion,
    chartVersion: crdChartVersion(c),
  }))
}

function crdAgreement(facts: Facts, release: HelmRelease): Finding[] {
  const v = releaseVersion(release)
  if (!v) skip(`chart version ${JSON.stringify(release.chartVersion)} is not readable`)
  if (v.major === 0)
    skip(`Karpenter ${v.raw} is a v0.x install: karpenter-version explains its CRD migration`)
  const all = need(facts.kube.crds)
  const crds = all.filter((c) => V1_CRDS.includes(c.name))
  const subject = releaseRef(release)
  const fixCrds = (summary: string) => ({
    summary,
    commands: crdChartCommands(release.namespace, release.chartVersion, crds, release.name),
  })
  const findings: Finding[] = []

  const missing = V1_CRDS.filter((n) => !crds.some((c) => c.name === n))
  if (missing.length > 0) {
    findings.push({
      status: 'fail',
      subject: missing.join(', '),
      message: `CRD${missing.length > 1 ? 's' : ''} ${missing.join(', ')} missing: chart ${v.raw} (${subject}) cannot run without ${missing.length > 1 ? 'them' : 'it'}`,
      evidence: { missing, crds: servedSummary(crds) },
      fix: fixCrds(`install the CRDs of ${v.raw} with the karpenter-crd chart`),
    })
  }

  const withoutV1 = crds.filter((c) => !c.servedVersions.includes('v1'))
  if (withoutV1.length > 0) {
    findings.push({
      status: 'fail',
      subject: withoutV1.map((c) => c.name).join(', '),
      message: `${withoutV1.map((c) => c.name).join(', ')} do not serve v1 (only ${[...new Set(withoutV1.flatMap((c) => c.servedVersions))].join(', ')}): chart ${v.raw} reads and writes karpenter v1 objects`,
      evidence: { crds: servedSummary(withoutV1) },
      fix: fixCrds(
        `upgrade the CRDs to ${v.raw} (Helm never upgrades the CRDs in the karpenter chart's crds/ folder)`,
      ),
    })
  }

  const generation = generationOf(v)
  const betaServed = crds.filter((c) => c.servedVersions.includes('v1beta1'))
  if (generation === 'v1' && betaServed.length > 0) {
    findings.push({
      status: 'warn',
      subject: betaServed.map((c) => c.name).join(', '),
      message: `${betaServed.map((c) => c.name).join(', ')} still serve v1beta1 through a conversion webhook, as in v1.0.x, but chart ${v.raw} runs no webhook: conversions fail and fields added since v1.0 are pruned`,
      evidence: { crds: servedSummary(betaServed) },
      fix: fixCrds(`upgrade the CRDs to ${v.raw}`),
    })
  }
  if (generation === 'v1.0' && crds.length > 0 && betaServed.length < crds.length) {
    findings.push({
      status: 'warn',
      subject: crds
        .filter((c) => !betaServed.includes(c))
        .map((c) => c.name)
        .join(', '),
      message: `chart ${v.raw} is v1.0.x but some CRDs no longer serve v1beta1: they come from a newer chart`,
      evidence: { crds: servedSummary(crds) },
      fix: fixCrds(`align the CRDs with ${v.raw}, or better, upgrade the chart to v1.1+`),
    })
  }

  const skewed = crds.filter((c) => {
    const cv = crdChartVersion(c)
    return cv !== undefined && cv !== v.raw.replace(/^v/, '')
  })
  if (skewed.length > 0) {
    findings.push({
      status: 'warn',
      subject: skewed.map((c) => c.name).join(', '),
      message: `CRD versions ${skewed.map((c) => `${c.name}=${crdChartVersion(c)}`).join(', ')} differ from chart ${v.raw} (${subject})`,
      evidence: { chartVersion: release.chartVersion, crds: servedSummary(skewed) },
      fix: fixCrds(`install the CRDs of the running chart, ${v.raw}`),
    })
  }

  if (findings.length === 0) {
    findings.push({
      status: 'pass',
      subject,
      message: `CRDs ${V1_CRDS.join(', ')} serve v1 as chart ${v.raw} needs`,
      evidence: { crds: servedSummary(crds) },
    })
  }
  return findings
}

/** EKS's own version when it was read, else the API server's. */
function clusterKubernetes(facts: Facts): { version: KubernetesMinor | null; raw: string; source: string } {
  const cluster = optional(facts.eks.cluster)
  if (cluster?.version)
    return {
      version: parseKubernetesMinor(cluster.version),
      raw: cluster.version,
      source: 'eks:DescribeCluster',
    }
  const server = need(facts.kube.serverVersion)
  if (!server) skip('the Kubernetes version is not known (neither EKS nor the API server reported it)')
  return { version: parseKubernetesMinor(server), raw: server, source: 'kube-apiserver /version' }
}

function kubernetesVersion(facts: Facts, release: HelmRelease): Finding[] {
  const v = releaseVersion(release)
  if (!v) skip(`chart version ${JSON.stringify(release.chartVersion)} is not readable`)
  const k8s = clusterKubernetes(facts)
  if (!k8s.version) skip(`the Kubernetes version ${JSON.stringify(k8s.raw)} is not readable`)
  const kube = k8s.version
  const range = supportRange(v)
  const subject = releaseRef(release)
  const evidence = { karpenter: v.raw, kubernetes: k8s.raw, source: k8s.source, supported: range?.entry }
  const support = kubernetesSupport(v, kube)
  const span = range ? `${range.entry.minKubernetes}–${range.entry.maxKubernetes}` : ''

  if (support === 'supported') {
    return [
      {
        status: 'pass',
        subject,
        message: `Karpenter ${v.raw} supports Kubernetes ${formatMinor(kube)} (${span})`,
        evidence,
      },
    ]
  }
  if (support === 'unknown') {
    return [
      {
        status: 'unknown',
        subject,
        message: `Karpenter ${v.raw} predates karpctl's compatibility table: cannot tell whether it supports Kubernetes ${formatMinor(kube)}`,
        evidence,
      },
    ]
  }
  if (support === 'too-old') {
    const next = `${kube.major}.${kube.minor + 1}`
    return [
      {
        status: 'fail',
        subject: facts.meta.clusterName,
        message: `Kubernetes ${formatMinor(kube)} is older than Karpenter ${v.raw} accepts (${span}): the controller refuses to start`,
        evidence,
        fix: {
          summary: `upgrade the cluster one minor at a time to at least ${range?.entry.minKubernetes}`,
          commands: [
            `aws eks update-cluster-version --name ${facts.meta.clusterName} --kubernetes-version ${next} --region ${facts.meta.region}`,
          ],
        },
      },
    ]
  }
  // too-new: a version newer than the table may well support it; say so instead of failing.
  if (range && !range.reviewed) {
    return [
      {
        status: 'warn',
        subject,
        message: `Karpenter ${v.raw} is newer than karpctl's compatibility table (supported through ${range.entry.maxKubernetes} for the versions it knows): cannot confirm support for Kubernetes ${formatMinor(kube)}`,
        evidence,
        fix: { summary: `check ${COMPATIBILITY_URL} for Karpenter ${v.major}.${v.minor}` },
      },
    ]
  }
  return [tooNew(facts, release, v, kube, span, evidence)]
}

function tooNew(
  facts: Facts,
  release: HelmRelease,
  v: KarpenterVersion,
  kube: KubernetesMinor,
  span: string,
  evidence: Record<string, unknown>,
): Finding {
  const minimum = minimumKarpenterFor(kube)
  const target = minimum ? DEFAULT_KARPENTER_VERSION : null
  const legacy = v.major === 0
  const summary = !target
    ? `no Karpenter version in karpctl's table supports Kubernetes ${formatMinor(kube)} yet: check ${COMPATIBILITY_URL}`
    : legacy
      ? `Karpenter ${minimum}+ supports Kubernetes ${formatMinor(kube)}; from ${v.raw} upgrade in stages: ${upgradePath(generationOf(v))}`
      : `upgrade the CRDs and the chart (Karpenter ${minimum}+ supports Kubernetes ${formatMinor(kube)})`
  const crds = optional(facts.kube.crds)?.filter((c) => V1_CRDS.includes(c.name)) ?? []
  const commands =
    target && !legacy && !isRendered(release)
      ? [
          ...crdChartCommands(release.namespace, target, crds, release.name),
          helmUpgradeCommand(release, target),
        ]
      : []
  return {
    status: 'fail',
    subject: releaseRef(release),
    message: `Karpenter ${v.raw} supports Kubernetes ${span}, but cluster ${facts.meta.clusterName} runs ${formatMinor(kube)}: the controller validates the version at start-up and may refuse to run, and node images for ${formatMinor(kube)} may not resolve`,
    evidence,
    fix: {
      summary:
        isRendered(release) && target && !legacy
          ? `${summary}: raise the chart version ${appliedBy(release)} renders to ${target}`
          : summary,
      commands,
    },
  }
}
