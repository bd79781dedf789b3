// What `why` says of one NodePool for one pod: its own module, below the judge and the fit that both
// speak it, so neither imports the other for a type.
import type { Fix } from '../checks/types.js'

export type PoolStatus = 'fits' | 'ruled-out' | 'not-judged' | 'unknown'
export type Rule =
  | 'nodeclass'
  | 'taints'
  | 'host-ports'
  | 'requirements'
  | 'zones'
  | 'topology-spread'
  | 'pod-affinity'
  | 'limits'
  | 'devices'
  | 'ephemeral-storage'
  | 'instance-types'

export interface PoolVerdict {
  nodePool: string
  weight: number
  status: PoolStatus
  /** The rule that ruled the NodePool out (or could not be judged). */
  rule?: Rule
  message: string
  fix?: Fix
}
