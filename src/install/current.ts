// What the running install was set to, read back from the cluster, so a re-run's defaults are the
// user's earlier answers (a CPU limit of 200 chosen in the wizard stays 200 under `install --yes`);
// flags still win. Read from what Karpenter runs with, not from a karpctl record: it holds for an
// install another tool made as for karpctl's own.
import type { KubeClient } from '../context/kube.js'
import type { HelmRelease } from '../facts/types.js'
import type { NodePoolChoice } from '../desired/install.js'
import { parseQuantity } from '../desired/quantity.js'

export interface CurrentSettings {
  karpenterVersion: string
  namespace: string
  identity: 'irsa' | 'pod-identity'
  interruption: boolean
  /** The default EC2NodeClass's role: karpctl's conventional name means "create" (karpctl's own). */
  nodeRole?: string
  access?: 'access-entry' | 'aws-auth'
  nodePool: Partial<NodePoolChoice>
}

interface Requirement {
  key: string
  operator: string
  values?: string[]
}

interface NodePoolShape {
  spec?: {
    template?: { spec?: { requirements?: Requirement[] } }
    limits?: { cpu?: string | number }
  }
}

const IRSA_ANNOTATION = 'eks.amazonaws.com/role-arn'

/** A Kubernetes CPU quantity in whole cores ("200", "200000m"), or undefined when it is not one. */
export function wholeCores(q: string | number | undefined): number | undefined {
  // What karpctl writes (cores, or millicores): a limit in another unit is not one of its choices.
  if (q === undefined || !/^\d+m?$/.test(String(q))) return undefined
  const n = parseQuantity(q)
  return n !== undefined && Number.isInteger(n) && n > 0 ? n : undefined
}

/** The default NodePool's choices karpctl asks about; a requirement it does not state is left out. */
export function nodePoolChoices(np: NodePoolShape | null): Partial<NodePoolChoice> {
  const reqs = np?.spec?.template?.spec?.requirements ?? []
  const inValues = (key: string) => {
    const r = reqs.find((x) => x.key === key && x.operator === 'In' && (x.values ?? []).length > 0)
    return r ? [...(r.values as string[])] : undefined
  }
  const out: Partial<NodePoolChoice> = {}
  const capacityTypes = inValues('karpenter.sh/capacity-type')
  const instanceCategories = inValues('karpenter.k8s.aws/instance-category')
  const architectures = inValues('kubernetes.io/arch')
  const cpuLimit = wholeCores(np?.spec?.limits?.cpu)
  if (capacityTypes) out.capacityTypes = capacityTypes
  if (instanceCategories) out.instanceCategories = instanceCategories
  if (architectures) out.architectures = architectures
  if (cpuLimit !== undefined) out.cpuLimit = cpuLimit
  return out
}

/** Identity and interruption as the release runs them (its user-supplied values). */
export function releaseChoices(r: HelmRelease): Pick<CurrentSettings, 'identity' | 'interruption'> {
  const sa = r.values.serviceAccount as { annotations?: Record<string, unknown> } | undefined
  const settings = r.values.settings as { interruptionQueue?: unknown } | undefined
  return {
    identity: sa?.annotations?.[IRSA_ANNOTATION] ? 'irsa' : 'pod-identity',
    interruption: typeof settings?.interruptionQueue === 'string' && settings.interruptionQueue !== '',
  }
}

/** How the default node role joins: through aws-auth when the ConfigMap maps it, else an access entry. */
export function accessOf(mapRoles: string | undefined, roleName: string): 'access-entry' | 'aws-auth' {
  return mapRoles && new RegExp(`:role/(?:[^\\s"']*/)?${roleName}["'\\s]`).test(`${mapRoles}\n`)
    ? 'aws-auth'
    : 'access-entry'
}

export async function currentSettings(
  kube: KubeClient,
  release: HelmRelease,
  conventionalNodeRole: string,
): Promise<CurrentSettings> {
  const [np, nc, awsAuth] = await Promise.all([
    kube.get<NodePoolShape>('/apis/karpenter.sh/v1/nodepools/default'),
    kube.get<{ spec?: { role?: string } }>('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default'),
    kube.get<{ data?: { mapRoles?: string } }>('/api/v1/namespaces/kube-system/configmaps/aws-auth'),
  ])
  const role = nc?.spec?.role
  return {
    karpenterVersion: release.chartVersion,
    namespace: release.namespace,
    ...releaseChoices(release),
    ...(role
      ? {
          nodeRole: role === conventionalNodeRole ? 'create' : role,
          access: accessOf(awsAuth?.data?.mapRoles, role),
        }
      : {}),
    nodePool: nodePoolChoices(np),
  }
}
