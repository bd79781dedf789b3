// The upgrade use case: an installed Karpenter 1.x (karpctl's, the getting-started stack's, Terraform's,
// eksctl's — discovered by doctor's collectors) → one plan, in the order an upgrade must go:
// preconditions, the controller role's new permissions, the CRDs, the controller, then what the old
// version alone needed (the 8443 rule of the 1.0.x webhooks). Applied by the one executor; every step
// observes what is there, so a re-run is a no-op and a stopped run is finished by running it again.
import { appliedBy } from '../checks/lib/facts.js'
import { KARPENTER_CHART, KARPENTER_CRD_CHART } from '../checks/lib/compat.js'
import { EnvironmentError } from '../errors.js'
import { releaseNamed } from '../facts/collect-kube.js'
import type { Facts, HelmRelease } from '../facts/types.js'
import type { KubeClient } from '../context/kube.js'
import { chartCrdNames, chartDirCrdNames, crdHandover } from '../plan/resources/crd-handover.js'
import { chartDirVersion, helmRelease, UPGRADED_TO } from '../plan/resources/helm-release.js'
import { isOwned } from '../plan/compare.js'
import { recordedIngressRestore } from '../plan/resources/recorded-ingress.js'
import { ADDED_INGRESS, REPAIRED_INGRESS } from '../plan/resources/webhook-ingress.js'
import type { Resource } from '../plan/types.js'
import { hasWebhooks, OWNERSHIP } from '../desired/install.js'
import { adoptionTags } from '../desired/ownership.js'
import { controllerIamStep, IAM_ADDRESS } from './iam.js'
import {
  kubernetesGate,
  precondition,
  readStoredVersions,
  releaseGate,
  storageGate,
  versionGate,
  withNote,
} from './preconditions.js'
import { migrateValues, type Chart, type ValueMigration } from './values.js'

export interface UpgradeRequest {
  /** The version to upgrade to (x.y.z). */
  target: string
  /** A folder holding karpenter/ and karpenter-crd/ of the target version, instead of the OCI charts. */
  chartDir?: string
  /** The user values of the karpenter-crd release, when there is one (carried as the controller's are). */
  crdValues?: Record<string, unknown>
  /** The controller release's labels: whether karpctl made the install (absent: it did not). */
  releaseLabels?: Record<string, string>
}

export interface UpgradePlan {
  title: string
  resources: Resource[]
  installed: string
  release: HelmRelease
  /** Actions only the old template grants: named as removable after the upgrade. */
  removableActions: string[]
  /** tcp/8443 rules for the 1.0.x webhooks that karpctl did not record adding: named, never removed. */
  removableIngress: string[]
  migrations: ValueMigration[]
}

const CRD_RELEASE = 'karpenter-crd'

/** The install's Karpenter release, or the one-line error that says there is none to upgrade. */
export function releaseOf(facts: Facts): HelmRelease {
  const r = facts.kube.release.ok ? facts.kube.release.value : null
  const rendered = !r && facts.kube.rendered?.ok ? facts.kube.rendered.value : null
  // Argo CD, Flux or kubectl applied it: a Helm upgrade would install a second controller beside it.
  if (rendered)
    throw new EnvironmentError(
      `Karpenter ${rendered.chartVersion} runs in cluster ${facts.meta.clusterName} with no Helm release (${appliedBy(rendered)}): upgrade it where it is applied (raise the chart version it renders), then run \`karpctl doctor\``,
      'INSTALLED_BY_OTHER_TOOL',
    )
  if (!r)
    throw new EnvironmentError(
      `no Karpenter Helm release found in cluster ${facts.meta.clusterName}: run \`karpctl install\` (or \`karpctl doctor\` to see what runs)`,
      'NOT_INSTALLED',
    )
  return r
}

/**
 * Read before the plan (the release steps read the rest): the karpenter-crd release's user values and
 * the controller release's labels.
 */
export async function releaseRecords(
  kube: KubeClient,
  release: HelmRelease,
): Promise<Pick<UpgradeRequest, 'crdValues' | 'releaseLabels'>> {
  const [crd, controller] = await Promise.all([
    releaseNamed(kube, release.namespace, CRD_RELEASE),
    releaseNamed(kube, release.namespace, release.name),
  ])
  return { crdValues: crd?.release.values ?? {}, releaseLabels: controller?.labels ?? {} }
}

export function upgradePlan(facts: Facts, req: UpgradeRequest): UpgradePlan {
  const release = releaseOf(facts)
  const installed = release.chartVersion.replace(/^v/, '')
  const { target } = req
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const title = `karpctl upgrade — cluster ${facts.meta.clusterName} (${facts.meta.region}, account ${facts.meta.accountId ?? '?'}), Karpenter ${installed} → ${target}, release ${release.namespace}/${release.name}`
  const base = { title, installed, release, removableActions: [], removableIngress: [], migrations: [] }
  const version = precondition({
    key: 'version',
    name: `Karpenter ${installed} → ${target}`,
    judge: () => versionGate(installed, target),
  })
  // Nothing else can be judged from a version that is not an upgrade's.
  if (!versionGate(installed, target).ok) return { ...base, resources: [version] }

  const gates = [
    version,
    precondition({
      key: 'release',
      name: `release ${release.namespace}/${release.name}`,
      judge: () => releaseGate(release, target),
    }),
    precondition({
      key: 'kubernetes',
      name: `Kubernetes ${cluster?.version ?? '(unknown)'}`,
      judge: () => kubernetesGate(target, cluster?.version),
    }),
    precondition<Record<string, string[]>>({
      key: 'storage',
      name: 'CRDs stored as v1',
      observe: ({ kube }) => readStoredVersions(kube),
      judge: (stored) => storageGate(installed, target, stored ?? {}),
    }),
  ]
  const after = gates.map((g) => g.address)

  const iam = controllerIamStep(facts, installed, target)
  iam.resource.dependsOn = after

  const chart = (name: Chart, oci: string) =>
    req.chartDir
      ? {
          chart: `${req.chartDir}/${name}`,
          version: undefined,
          expectedVersion: chartDirVersion(`${req.chartDir}/${name}`),
        }
      : { chart: oci, version: target, expectedVersion: target }
  const created = { [OWNERSHIP.managedBy]: 'karpctl' }
  const adoptLabels = adoptionTags(facts.meta.clusterName)
  // karpctl's own install stays karpctl's (teardown removes it); another tool's is upgraded as asked and
  // stays the user's: labelled as karpctl's upgrade, kept by teardown.
  const ours = isOwned(req.releaseLabels ?? {}, created)
  const labels = ours ? created : { ...adoptLabels, [UPGRADED_TO]: target }
  const crdValues = migrateValues('karpenter-crd', req.crdValues ?? {}, installed, target)
  const values = migrateValues('karpenter', release.values, installed, target)
  const migratedNote = (m: ValueMigration[]) =>
    m.length
      ? `values migrated from ${installed}: ${m.map((x) => (x.to === undefined ? `${x.path} removed (${x.why})` : `${x.path} as a string (${x.why})`)).join('; ')}`
      : undefined

  // Asking for the upgrade is asking to take over what it must change: the CRDs get Helm's marks for the
  // karpenter-crd release (on karpctl's install recorded, given back by teardown), a release another
  // tool made is upgraded with the upgrade's labels, never karpctl's created mark.
  const crds = crdHandover({
    clusterName: facts.meta.clusterName,
    namespace: release.namespace,
    names: req.chartDir ? chartDirCrdNames(`${req.chartDir}/${CRD_RELEASE}`) : chartCrdNames(target),
    adopt: true,
    // On another tool's install the handover is part of the upgrade it keeps: no record to give back.
    record: ours,
    dropConversion: !hasWebhooks(target),
    dependsOn: [IAM_ADDRESS],
  })
  const crdRelease = withNote(
    helmRelease({
      address: 'helm.karpenter-crd',
      release: CRD_RELEASE,
      namespace: release.namespace,
      chartName: CRD_RELEASE,
      ...chart('karpenter-crd', KARPENTER_CRD_CHART),
      values: crdValues.values,
      labels,
      adoptLabels,
      adopt: true,
      upgradedTo: target,
      dependsOn: [crds.address],
    }),
    migratedNote(crdValues.migrations),
  )
  const controller = withNote(
    helmRelease({
      address: 'helm.karpenter',
      release: release.name,
      namespace: release.namespace,
      chartName: 'karpenter',
      ...chart('karpenter', KARPENTER_CHART),
      values: values.values,
      labels,
      adoptLabels,
      adopt: true,
      upgradedTo: target,
      unique: true,
      // The new controller starts with its permissions and its CRDs in place.
      dependsOn: [crdRelease.address, IAM_ADDRESS],
    }),
    migratedNote(values.migrations),
  )
  const resources: Resource[] = [
    ...gates,
    iam.resource,
    crds,
    crdRelease,
    controller,
    ...(iam.after?.(controller.address) ?? []),
  ]
  const clusterSg = cluster?.clusterSecurityGroupId ?? cluster?.securityGroupIds[0]
  if (!hasWebhooks(target) && clusterSg) resources.push(webhookRuleRestore(clusterSg, cluster?.vpcId))
  return {
    ...base,
    resources,
    removableActions: iam.removable,
    removableIngress: hasWebhooks(target) || !clusterSg ? [] : unrecordedIngress(facts, clusterSg),
    migrations: [...crdValues.migrations, ...values.migrations],
  }
}

/**
 * The tcp/8443 rule karpctl recorded adding (install, or doctor --fix) for the 1.0.x webhooks: revoked
 * once the controller runs without them. Only this cluster's: the record names the source group.
 */
function webhookRuleRestore(clusterSg: string, vpcId: string | undefined): Resource {
  const r = recordedIngressRestore({ vpcId, repairs: true, dependsOn: ['helm.karpenter'] })
  const restore: typeof r = {
    ...r,
    address: 'ec2-ingress.webhook-8443',
    kind: 'security group rule',
    name: `tcp/8443 from ${clusterSg} (the 1.0.x webhooks)`,
    async observe(env) {
      return (await r.observe(env))?.filter((x) => x.source === clusterSg) ?? null
    },
    verdict(cur) {
      const v = r.verdict(cur)
      return v.action === 'unchanged' ? { ...v, note: 'none that karpctl recorded adding' } : v
    },
  }
  return restore as Resource
}

/** 8443 rules from the cluster group on the nodes' groups that carry no karpctl record: the user's. */
function unrecordedIngress(facts: Facts, clusterSg: string): string[] {
  const out = new Set<string>()
  for (const read of Object.values(facts.ec2.securityGroupsByNodeClass)) {
    if (!read.ok) continue
    for (const sg of read.value) {
      if (
        sg.id === clusterSg ||
        sg.tags[ADDED_INGRESS] !== undefined ||
        sg.tags[REPAIRED_INGRESS] !== undefined
      )
        continue
      const opens = sg.ingress.some(
        (p) =>
          p.protocol === 'tcp' &&
          (p.fromPort ?? 0) <= 8443 &&
          (p.toPort ?? 65535) >= 8443 &&
          p.sourceGroupIds.includes(clusterSg),
      )
      if (opens)
        out.add(
          `aws ec2 revoke-security-group-ingress --group-id ${sg.id} --protocol tcp --port 8443 --source-group ${clusterSg}`,
        )
    }
  }
  return [...out]
}
