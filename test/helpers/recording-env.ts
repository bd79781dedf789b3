// An ApplyEnv whose AWS reads answer by operation and whose Kubernetes reads answer by path; every
// AWS and Kubernetes write is recorded in order, so a test can compare the calls a step made with
// the ones it must make, exactly. `awsCalls` lists every AWS read and write with its service, in order;
// `writeErrors` makes a write fail (after it is recorded) with the error its function returns.
import type { ApplyEnv } from '../../src/plan/types.js'
import { onePage } from './pager.js'

export type AwsAnswer = (input: Record<string, unknown>) => unknown

export interface AwsWrite {
  op: string
  input: Record<string, unknown>
}

export interface KubeWrite {
  method: string
  path: string
  body?: unknown
  contentType?: string
}

export interface AwsCall {
  service: string
  op: string
}

export interface RecordingEnv {
  env: ApplyEnv
  awsWrites: AwsWrite[]
  awsCalls: AwsCall[]
  kubeWrites: KubeWrite[]
}

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T))

export function recordingEnv(
  o: {
    aws?: Record<string, AwsAnswer>
    kube?: Record<string, unknown>
    writeErrors?: Record<string, (input: Record<string, unknown>) => Error | undefined>
  } = {},
): RecordingEnv {
  const awsWrites: AwsWrite[] = []
  const awsCalls: AwsCall[] = []
  const kubeWrites: KubeWrite[] = []
  const answer = async (service: string, op: string, input: Record<string, unknown> = {}) => {
    awsCalls.push({ service, op })
    const a = o.aws?.[op]
    if (!a) throw Object.assign(new Error(`${op} not found`), { name: 'NoSuchEntity' })
    return clone(a(input))
  }
  const kubeRead = async (path: string) => clone(o.kube?.[path] ?? null)
  const env = {
    aws: {
      call: answer,
      write: async (service: string, op: string, input: Record<string, unknown>) => {
        awsCalls.push({ service, op })
        awsWrites.push({ op, input: clone(input) })
        const failed = o.writeErrors?.[op]?.(input)
        if (failed) throw failed
        return {}
      },
      all: onePage(answer),
    },
    kube: {
      get: kubeRead,
      fresh: kubeRead,
      write: async (method: string, path: string, body?: unknown, contentType?: string) => {
        kubeWrites.push({
          method,
          path,
          ...(body === undefined ? {} : { body: clone(body) }),
          ...(contentType === undefined ? {} : { contentType }),
        })
        return {}
      },
    },
    helm: async () => ({}),
    ownershipTags: {},
    sleep: async () => {},
    now: () => new Date(0),
  } as unknown as ApplyEnv
  return { env, awsWrites, awsCalls, kubeWrites }
}
