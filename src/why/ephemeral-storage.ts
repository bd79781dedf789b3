// Ephemeral storage: what a node's kubelet offers pods is the disk Karpenter sizes it by
// (karpenter-provider-aws pkg/providers/instancetype/types.go, ephemeralStorage and evictionThreshold):
// the instance store under `instanceStorePolicy: RAID0` when the type has one, else the EC2NodeClass's
// root volume (its `rootVolume` block device mapping, else the AMI family's ephemeral device, else the
// family's default size), less kube-reserved (1Gi unless kubelet.kubeReserved says) and the nodefs
// eviction threshold (10% unless kubelet.evictionHard's `nodefs.available` says).
import type { Fix } from '../checks/types.js'
import { shellQuote } from '../checks/lib/facts.js'
import type { EC2NodeClass } from '../facts/types.js'
import { parseQuantity } from './quantity.js'
import type { InstanceTypeInfo } from './types.js'

const GiB = 2 ** 30
export const EPHEMERAL_STORAGE = 'ephemeral-storage'

/** Each AMI family's ephemeral block device and its default size (amifamily DefaultBlockDeviceMappings). */
const FAMILY_DEVICE: Record<string, { device: string; size: number } | undefined> = {
  AL2: { device: '/dev/xvda', size: 20 * GiB },
  AL2023: { device: '/dev/xvda', size: 20 * GiB },
  Bottlerocket: { device: '/dev/xvdb', size: 20 * GiB },
  Windows2019: { device: '/dev/sda1', size: 50 * GiB },
  Windows2022: { device: '/dev/sda1', size: 50 * GiB },
  Windows2025: { device: '/dev/sda1', size: 50 * GiB },
}
/** Karpenter's DefaultEBS volume size: a Custom AMI's, and any family's without a known device. */
const DEFAULT_EBS = 20 * GiB

/** The EC2NodeClass's AMI family: `spec.amiFamily`, or the family of its `alias` AMI selector. */
export function amiFamilyOf(nc: EC2NodeClass | undefined): string {
  if (nc?.spec.amiFamily) return nc.spec.amiFamily
  const alias =
    nc?.spec.amiSelectorTerms
      ?.find((t) => t.alias)
      ?.alias?.split('@')[0]
      ?.toLowerCase() ?? ''
  const known = Object.keys(FAMILY_DEVICE).find((f) => f.toLowerCase() === alias)
  return known ?? 'Custom'
}

export interface EphemeralDisk {
  /** bytes */
  capacity: number
  /** Where the size comes from, for the message. */
  from: string
  /** What a fix changes: the block device mapping index, or a new list. */
  mapping?: number
  instanceStore?: boolean
}

/** The disk Karpenter sizes a node's ephemeral storage by, or undefined when the facts cannot tell. */
export function ephemeralDisk(it: InstanceTypeInfo, nc: EC2NodeClass | undefined): EphemeralDisk | undefined {
  if (nc?.spec.instanceStorePolicy === 'RAID0') {
    if (it.instanceStorageGB === undefined) return undefined
    if (it.instanceStorageGB > 0)
      return {
        capacity: it.instanceStorageGB * 1e9,
        from: `${it.name}'s instance store (instanceStorePolicy RAID0)`,
        instanceStore: true,
      }
  }
  return rootDisk(nc)
}

/** The root (ephemeral) EBS volume of the EC2NodeClass's nodes. */
export function rootDisk(nc: EC2NodeClass | undefined): EphemeralDisk {
  const family = amiFamilyOf(nc)
  const known = FAMILY_DEVICE[family]
  const bdms = nc?.spec.blockDeviceMappings ?? []
  const at = (i: number): EphemeralDisk | undefined => {
    const size = parseQuantity(bdms[i]?.ebs?.volumeSize)
    return size === undefined
      ? undefined
      : { capacity: size, from: `spec.blockDeviceMappings[${i}].ebs.volumeSize`, mapping: i }
  }
  let disk: EphemeralDisk | undefined
  const root = bdms.findIndex((b) => b.rootVolume)
  if (root >= 0) disk = at(root)
  if (!disk && bdms.length && family === 'Custom') disk = at(bdms.length - 1)
  if (!disk && bdms.length && known) {
    const i = bdms.findIndex((b) => b.deviceName === known.device)
    if (i >= 0) disk = at(i)
  }
  return (
    disk ??
    (known
      ? { capacity: known.size, from: `the ${family} default ${known.device}` }
      : { capacity: DEFAULT_EBS, from: `Karpenter's default for a ${family} AMI` })
  )
}

/** What the kubelet leaves pods of a disk this size (kube-reserved, system-reserved, nodefs eviction). */
export function ephemeralAllocatable(capacity: number, nc: EC2NodeClass | undefined): number {
  const kubelet = nc?.spec.kubelet
  const reserved =
    (parseQuantity(kubelet?.kubeReserved?.[EPHEMERAL_STORAGE]) ?? GiB) +
    (parseQuantity(kubelet?.systemReserved?.[EPHEMERAL_STORAGE]) ?? 0)
  const hard = kubelet?.evictionHard?.['nodefs.available']
  // 100% disables the threshold, as the kubelet reads it.
  const pct = hard?.endsWith('%') ? Number(hard.slice(0, -1)) % 100 : undefined
  const eviction =
    hard === undefined
      ? Math.ceil(capacity / 10)
      : pct !== undefined
        ? Math.ceil((capacity * pct) / 100)
        : (parseQuantity(hard) ?? Math.ceil(capacity / 10))
  return capacity - reserved - eviction
}

export interface StorageQuestion {
  pool: string
  nodeClass: EC2NodeClass | undefined
  /** bytes a node needs: the pod's request plus the DaemonSets'. */
  need: number
  /** The types the requirements leave. */
  left: InstanceTypeInfo[]
}

/** The types with room; when none, why not and the fix; or why it cannot be told. */
export type StorageVerdict =
  { only: InstanceTypeInfo[] } | { message: string; fix: Fix } | { unknown: string }

/** Whole GiB when exact, else one decimal rounded down (what is left is never overstated). */
const gib = (n: number) =>
  n % GiB === 0 ? `${n / GiB}Gi` : `${(Math.floor((n / GiB) * 10) / 10).toFixed(1)}Gi`

export function judgeEphemeralStorage(q: StorageQuestion): StorageVerdict {
  const { nodeClass: nc, need } = q
  let best: { it: InstanceTypeInfo; disk: EphemeralDisk; room: number } | undefined
  const only: InstanceTypeInfo[] = []
  // Without RAID0 every type's disk is the root volume: one sum answers for all of them.
  const types = nc?.spec.instanceStorePolicy === 'RAID0' ? q.left : q.left.slice(-1)
  for (const it of types) {
    const disk = ephemeralDisk(it, nc)
    if (!disk)
      return {
        unknown: `ephemeral-storage not judged: the facts hold no instance store sizes (read by an older karpctl) and EC2NodeClass ${nc?.metadata.name ?? '?'} uses instanceStorePolicy RAID0`,
      }
    const room = ephemeralAllocatable(disk.capacity, nc)
    if (room >= need) only.push(it)
    if (!best || room > best.room) best = { it, disk, room }
  }
  if (only.length || !best) return { only: types === q.left ? only : q.left }
  const where = best.disk.instanceStore
    ? `the largest instance store left is ${best.disk.from}`
    : `EC2NodeClass ${nc?.metadata.name ?? '?'}'s node disk is ${best.disk.from}`
  const message = `no instance type has room for ephemeral-storage ${gib(need)}: ${where}, ${gib(best.disk.capacity)}, ${gib(best.room)} allocatable after kube-reserved and the nodefs eviction threshold`
  if (best.disk.instanceStore)
    return {
      message,
      fix: {
        summary: `lower the pod's ephemeral-storage request, or allow types with a larger instance store in NodePool ${q.pool} (requirement karpenter.k8s.aws/instance-local-nvme Gt ${Math.ceil(best.disk.capacity / 1e9)})`,
      },
    }
  return { message, fix: rootVolumeFix(nc, need) }
}

/** Grow the volume the node's ephemeral storage is on until the pod's request fits, in whole GiB. */
function rootVolumeFix(nc: EC2NodeClass | undefined, need: number): Fix {
  let gib = Math.ceil(need / GiB)
  while (ephemeralAllocatable(gib * GiB, nc) < need) gib++
  const volumeSize = `${gib}Gi`
  if (!nc)
    return { summary: `give the EC2NodeClass a root volume of ${volumeSize} (spec.blockDeviceMappings)` }
  const disk = rootDisk(nc)
  const family = amiFamilyOf(nc)
  const known = FAMILY_DEVICE[family]
  const ops =
    disk.mapping !== undefined
      ? [
          {
            op: 'replace',
            path: `/spec/blockDeviceMappings/${disk.mapping}/ebs/volumeSize`,
            value: volumeSize,
          },
        ]
      : [
          {
            op: 'add',
            path: '/spec/blockDeviceMappings',
            value: [
              // Bottlerocket's OS volume is its own device; its data volume holds pods' storage.
              ...(family === 'Bottlerocket'
                ? [
                    {
                      deviceName: '/dev/xvda',
                      ebs: { volumeSize: '4Gi', volumeType: 'gp3', encrypted: true },
                    },
                  ]
                : []),
              {
                deviceName: known?.device ?? '/dev/xvda',
                ...(family === 'Bottlerocket' ? {} : { rootVolume: true }),
                ebs: { volumeSize, volumeType: 'gp3', encrypted: true },
              },
            ],
          },
        ]
  return {
    summary: `grow EC2NodeClass ${nc.metadata.name}'s ${disk.mapping !== undefined ? `spec.blockDeviceMappings[${disk.mapping}]` : `${known?.device ?? 'root'} volume (spec.blockDeviceMappings)`} to ${volumeSize}, or lower the pod's ephemeral-storage request`,
    commands: [
      `kubectl patch ec2nodeclass ${shellQuote(nc.metadata.name)} --type json -p ${shellQuote(JSON.stringify(ops))}`,
    ],
  }
}
