// Why a read failed, in the words every layer above speaks: the clients make it, facts keep it, checks
// turn it into unknown. Its own module at the clients' floor, so the clients import nothing from above.
/** Why a read could not produce data. Checks that depend on it report `unknown` with this reason. */
export interface ReadFailure {
  /** Service error code or a karpctl code (e.g. AccessDenied, Throttling, NotImplemented, ECONNREFUSED). */
  code: string
  kind: 'denied' | 'throttled' | 'unsupported' | 'network' | 'error'
  message: string
  /** The read that failed, e.g. `iam:GetRole KarpenterNodeRole-demo`. */
  read: string
}
