// A plan resource whose observation, verdict and apply a test chooses, and which logs its applies.
import type { ApplyEnv, Permission, Resource, Verdict } from '../../src/plan/types.js'

export interface FakeState {
  exists: boolean
}

export interface FakeOptions {
  exists?: boolean
  blocked?: string
  apply?: () => Promise<void>
  /** Every apply appends the resource's address. */
  applied?: string[]
  permissions?: Permission[]
}

export function fakeResource(
  address: string,
  dependsOn: string[] = [],
  o: FakeOptions = {},
): Resource<FakeState> {
  return {
    address,
    kind: 'thing',
    name: address,
    group: 'g',
    dependsOn,
    desired: {},
    permissions: o.permissions ?? [],
    observe: async () => ({ exists: o.exists ?? false }),
    verdict: (cur): Verdict =>
      o.blocked
        ? { action: 'update', changes: [], blocked: o.blocked }
        : cur?.exists
          ? { action: 'unchanged', changes: [] }
          : { action: 'create', changes: [{ field: 'x', to: 1 }] },
    apply: async () => {
      o.applied?.push(address)
      await (o.apply ?? (async () => {}))()
    },
  }
}

/** An env for resources that use none of its clients: any client use fails the test loudly. */
export function bareEnv(): ApplyEnv {
  const refuse = (what: string) => () => {
    throw new Error(`unexpected use of ${what}`)
  }
  return {
    aws: { call: refuse('aws.call'), write: refuse('aws.write'), all: refuse('aws.all') },
    kube: { get: refuse('kube.get'), write: refuse('kube.write') },
    helm: refuse('helm'),
    ownershipTags: {},
    sleep: async () => {},
    now: () => new Date(0),
  } as unknown as ApplyEnv
}

/** An AWS error as the SDK throws it. */
export function awsError(name: string, message: string, status?: number): Error {
  return Object.assign(new Error(message), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
  })
}
