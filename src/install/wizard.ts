// install's questions: each answers one choice of the spec, has a flag, and a default drawn from the
// cluster (Pod Identity when its agent runs, access entries when the authentication mode allows).
import { InputError } from '../errors.js'
import { karpenterVersionProblem, validateCpuLimit, validateInstanceCategories } from '../desired/flags.js'
import {
  COMPATIBILITY_URL,
  DEFAULT_KARPENTER_VERSION,
  formatMinor,
  kubernetesSupport,
  minimumKarpenterFor,
  parseKubernetesMinor,
  supportRange,
} from '../checks/lib/compat.js'
import { parseVersion } from '../desired/version.js'
import { DEFAULT_NODEPOOL, type InstallSpec, type NodePoolChoice } from '../desired/install.js'
import type { Discovery } from './discover.js'
import { valuesFileProblem } from './values-file.js'
import type { Prompter } from '../context/prompter.js'

export interface InstallFlags {
  'karpenter-version'?: string
  namespace?: string
  identity?: string
  'node-role'?: string
  'node-access'?: string
  interruption?: boolean
  'capacity-types'?: string[]
  'instance-categories'?: string[]
  architectures?: string[]
  'cpu-limit'?: number
  values?: string
  'chart-dir'?: string
  'subnet-ids'?: string[]
  'security-group-ids'?: string[]
  'scale-down-cluster-autoscaler'?: boolean
  adopt?: boolean
}

/** Who answers: a terminal, or nobody (`--yes`, or no TTY: defaults, and an error for what has none). */
export interface Asker {
  prompter: Prompter | null
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/
const CAPACITY = ['on-demand', 'spot', 'reserved']
const ARCHES = ['amd64', 'arm64']

function validateVersion(v: string): string {
  const problem = karpenterVersionProblem(v)
  if (problem) throw new InputError(`${problem}: fix --karpenter-version`, 'INVALID_VERSION')
  return v.replace(/^v/, '')
}

/**
 * Doctor's compatibility table, before any change: a version that does not run on the cluster's
 * Kubernetes would apply every step and then fail doctor.
 */
export function validateCompat(version: string, clusterName: string, kubernetes: string | undefined): string {
  const k = parseKubernetesMinor(kubernetes)
  const v = parseVersion(version)
  if (!k || !v) return version
  const support = kubernetesSupport(v, k)
  if (support !== 'too-old' && support !== 'too-new') return version
  const range = supportRange(v)?.entry
  const min = minimumKarpenterFor(k)
  throw new InputError(
    `Karpenter ${version} supports Kubernetes ${range?.minKubernetes}–${range?.maxKubernetes}, and cluster ${clusterName} runs ${formatMinor(k)}: ${
      support === 'too-new' && min ? `choose ${min} or newer` : 'choose a version that supports it'
    } (${COMPATIBILITY_URL}) — nothing was changed`,
    'UNSUPPORTED_VERSION',
  )
}

function validateNamespace(ns: string): string {
  if (!NAMESPACE.test(ns))
    throw new InputError(
      `"${ns}" is not a Kubernetes namespace name (lower-case letters, digits, -): fix --namespace`,
      'INVALID_NAMESPACE',
    )
  return ns
}

function oneOf<T extends string>(v: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(v))
    throw new InputError(`--${flag} must be one of ${allowed.join(', ')} (got "${v}")`, 'INVALID_INPUT')
  return v as T
}

function listOf(vs: string[], allowed: string[] | null, flag: string): string[] {
  const out = vs.map((v) => v.trim()).filter(Boolean)
  if (out.length === 0) throw new InputError(`--${flag} needs at least one value`, 'INVALID_INPUT')
  if (allowed) for (const v of out) oneOf(v, allowed, flag)
  return [...new Set(out)]
}

async function ask<T>(
  a: Asker,
  given: T | undefined,
  fallback: T,
  q: (p: Prompter) => Promise<T>,
): Promise<T> {
  if (given !== undefined) return given
  if (!a.prompter) return fallback
  return q(a.prompter)
}

const ROLE_ARN = /^arn:aws[\w-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/
const ROLE_NAME = /^[\w+=,.@-]{1,64}$/

function nodeRoleChoice(v: string, d: Discovery): InstallSpec['nodeRole'] {
  if (v === 'create') return { create: true }
  if (ROLE_ARN.test(v)) return { create: false, arn: v }
  if (ROLE_NAME.test(v)) return { create: false, arn: `arn:${d.partition}:iam::${d.accountId}:role/${v}` }
  throw new InputError(
    `--node-role must be "create", a role name or a role ARN (got "${v}")`,
    'INVALID_INPUT',
  )
}

export type InstallChoices = Omit<InstallSpec, 'clusterName' | 'region' | 'accountId' | 'partition'>

export async function installChoices(flags: InstallFlags, d: Discovery, a: Asker): Promise<InstallChoices> {
  // Beside a running install, its version, namespace and identity are the defaults: install changes
  // what it must, and moving any of them is an upgrade or a migration, not a default.
  // Beside any install (karpctl's too), what it runs with is the default: a re-run keeps the earlier
  // answers unless a flag says otherwise.
  const existing = d.existing
  const cur = d.current ?? undefined
  const pool = { ...DEFAULT_NODEPOOL, ...cur?.nodePool }
  const versionDefault = cur?.karpenterVersion ?? DEFAULT_KARPENTER_VERSION
  const namespaceDefault = cur?.namespace ?? 'kube-system'
  const supported = (v: string) => validateCompat(validateVersion(v), d.cluster.name, d.cluster.version)
  const version = supported(
    await ask(a, flags['karpenter-version'], versionDefault, (p) =>
      p.input({
        message: 'Karpenter version',
        default: versionDefault,
        validate: (v) => tryValidate(() => supported(v)),
      }),
    ),
  )
  const namespace = validateNamespace(
    await ask(a, flags.namespace, namespaceDefault, (p) =>
      p.input({
        message: 'Namespace for the controller',
        default: namespaceDefault,
        validate: (v) => tryValidate(() => validateNamespace(v)),
      }),
    ),
  )
  if (!d.cluster.oidcIssuer && d.podIdentityAgent === false && flags.identity === undefined)
    throw new InputError(
      `cluster ${d.cluster.name} has neither an OIDC issuer (IRSA) nor the eks-pod-identity-agent add-on (Pod Identity): add the add-on (aws eks create-addon --cluster-name ${d.cluster.name} --addon-name eks-pod-identity-agent) and run again — nothing was changed`,
      'NO_IDENTITY',
    )
  const fallbackIdentity = d.podIdentityAgent === true || !d.cluster.oidcIssuer ? 'pod-identity' : 'irsa'
  const identityDefault = existing?.identity ?? cur?.identity ?? fallbackIdentity
  const identity = oneOf(
    await ask(a, flags.identity, identityDefault, (p) =>
      p.select({
        message: 'Controller identity',
        default: identityDefault,
        choices: [
          {
            name: 'EKS Pod Identity',
            value: 'pod-identity',
            description:
              d.podIdentityAgent === true
                ? 'the eks-pod-identity-agent add-on is installed'
                : 'needs the eks-pod-identity-agent add-on (not found)',
            ...(d.podIdentityAgent === false
              ? { disabled: '(install the eks-pod-identity-agent add-on first)' }
              : {}),
          },
          {
            name: 'IRSA (OIDC provider + service account annotation)',
            value: 'irsa',
            description: d.cluster.oidcIssuer
              ? `issuer ${d.cluster.oidcIssuer}`
              : 'the cluster has no OIDC issuer',
            ...(d.cluster.oidcIssuer ? {} : { disabled: '(the cluster has no OIDC issuer)' }),
          },
        ],
      }),
    ),
    ['pod-identity', 'irsa'] as const,
    'identity',
  )
  if (identity === 'irsa' && !d.cluster.oidcIssuer)
    throw new InputError(
      `cluster ${d.cluster.name} has no OIDC issuer, which IRSA needs: use --identity pod-identity`,
      'NO_OIDC_ISSUER',
    )

  const roleChoices = [
    { name: `Create KarpenterNodeRole-${d.cluster.name}`, value: 'create' },
    ...d.nodegroupRoles.map((g) => ({
      name: `Reuse ${g.roleArn.split('/').pop()} (node group ${g.nodegroup}, already joins the cluster)`,
      value: g.roleArn,
    })),
  ]
  const roleDefault = cur?.nodeRole ?? 'create'
  if (!roleChoices.some((c) => c.value === roleDefault || c.value.endsWith(`/${roleDefault}`)))
    roleChoices.push({ name: `Keep ${roleDefault} (the default EC2NodeClass's role)`, value: roleDefault })
  const roleDefaultValue =
    roleChoices.find((c) => c.value === roleDefault || c.value.endsWith(`/${roleDefault}`))?.value ?? 'create'
  const nodeRole = nodeRoleChoice(
    await ask(a, flags['node-role'], roleDefaultValue, (p) =>
      roleChoices.length > 1
        ? p.select({ message: 'Node IAM role', choices: roleChoices, default: roleDefaultValue })
        : Promise.resolve('create'),
    ),
    d,
  )
  const accessDefault = d.accessEntriesAllowed && cur?.access !== 'aws-auth' ? 'access-entry' : 'aws-auth'
  const access = nodeRole.create
    ? oneOf(
        await ask(a, flags['node-access'], accessDefault, (p) =>
          p.select({
            message: 'How nodes get cluster access',
            default: accessDefault,
            choices: [
              {
                name: 'EKS access entry (EC2_LINUX)',
                value: 'access-entry',
                description: `authentication mode ${d.cluster.authenticationMode ?? 'CONFIG_MAP'}`,
                ...(d.accessEntriesAllowed
                  ? {}
                  : {
                      disabled: `(authentication mode ${d.cluster.authenticationMode ?? 'CONFIG_MAP'} does not allow it)`,
                    }),
              },
              { name: 'aws-auth ConfigMap', value: 'aws-auth' },
            ],
          }),
        ),
        ['access-entry', 'aws-auth'] as const,
        'node-access',
      )
    : 'aws-auth'
  if (nodeRole.create && access === 'access-entry' && !d.accessEntriesAllowed)
    throw new InputError(
      `cluster ${d.cluster.name}'s authentication mode is ${d.cluster.authenticationMode ?? 'CONFIG_MAP'}: access entries need API or API_AND_CONFIG_MAP; use --node-access aws-auth`,
      'ACCESS_MODE',
    )
  const interruptionDefault = cur?.interruption ?? true
  const interruption = await ask(a, flags.interruption, interruptionDefault, (p) =>
    p.confirm({
      message: 'Handle spot interruptions and health events (SQS queue + 5 EventBridge rules)?',
      default: interruptionDefault,
    }),
  )
  const nodePool: NodePoolChoice = {
    capacityTypes: listOf(
      await ask(a, flags['capacity-types'], pool.capacityTypes, (p) =>
        p.checkbox({
          message: 'Default NodePool: capacity types',
          choices: CAPACITY.map((c) => ({
            name: c,
            value: c,
            checked: pool.capacityTypes.includes(c),
          })),
        }),
      ),
      CAPACITY,
      'capacity-types',
    ),
    instanceCategories: listOf(
      await ask(a, flags['instance-categories'], pool.instanceCategories, async (p) =>
        (
          await p.input({
            message: 'Default NodePool: instance categories (comma-separated)',
            default: pool.instanceCategories.join(','),
          })
        ).split(','),
      ),
      null,
      'instance-categories',
    ),
    architectures: listOf(
      await ask(a, flags.architectures, pool.architectures, (p) =>
        p.checkbox({
          message: 'Default NodePool: architectures',
          choices: ARCHES.map((c) => ({
            name: c,
            value: c,
            checked: pool.architectures.includes(c),
          })),
        }),
      ),
      ARCHES,
      'architectures',
    ),
    cpuLimit: await ask(a, flags['cpu-limit'], pool.cpuLimit, async (p) =>
      Number(
        await p.input({
          message: 'Default NodePool: CPU limit (cores)',
          default: String(pool.cpuLimit),
          validate: (v) => (/^\d+$/.test(v) && Number(v) > 0 ? true : 'a positive whole number'),
        }),
      ),
    ),
  }
  validateCpuLimit(nodePool.cpuLimit)
  validateInstanceCategories(nodePool.instanceCategories)
  const extraValuesFile = await ask(a, flags.values, '', (p) =>
    p.input({
      message: 'Extra Helm values file (empty for none)',
      default: '',
      validate: (v) => valuesFileProblem(v.trim()),
    }),
  )

  const autoscaler = d.clusterAutoscalers[0]
  let scaleDown = flags['scale-down-cluster-autoscaler']
  if (autoscaler && scaleDown === undefined && a.prompter)
    scaleDown = await a.prompter.confirm({
      message: `cluster-autoscaler runs (${autoscaler.namespace}/${autoscaler.name}, ${autoscaler.replicas} replicas): scale it to 0 so it does not fight Karpenter? (teardown gives it back)`,
      default: true,
    })

  const securityGroupIds =
    flags['security-group-ids'] ??
    [d.cluster.clusterSecurityGroupId ?? d.cluster.securityGroupIds[0] ?? ''].filter(Boolean)
  const subnetIds = flags['subnet-ids'] ?? d.privateSubnetIds
  if (subnetIds.length === 0)
    throw new InputError(
      `cluster ${d.cluster.name} has no private subnets to launch nodes in: pass --subnet-ids`,
      'NO_SUBNETS',
    )
  if (securityGroupIds.length === 0)
    throw new InputError(
      `cluster ${d.cluster.name} reports no security group for nodes: pass --security-group-ids`,
      'NO_SECURITY_GROUP',
    )

  return {
    karpenterVersion: version,
    namespace,
    serviceAccount: existing?.serviceAccount ?? 'karpenter',
    identity,
    nodeRole,
    access,
    interruption,
    nodePool,
    oidcIssuer: d.cluster.oidcIssuer,
    subnetIds,
    securityGroupIds,
    clusterSecurityGroupId: d.cluster.clusterSecurityGroupId ?? d.cluster.securityGroupIds[0],
    extraValuesFile: extraValuesFile.trim() || undefined,
    chartDir: flags['chart-dir'],
    scaleDownClusterAutoscaler:
      scaleDown && autoscaler ? { namespace: autoscaler.namespace, name: autoscaler.name } : undefined,
    adopt: flags.adopt ?? false,
  }
}

function tryValidate(fn: () => unknown): true | string {
  try {
    fn()
    return true
  } catch (err) {
    return (err as Error).message
  }
}
