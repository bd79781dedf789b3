// An ApplyEnv whose AWS reads answer by operation and whose Kubernetes reads answer by path; every
// AWS and Kubernetes write is recorded in order, so a test can compare the calls a step made with
// the ones it must make, exactly.
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

export interface RecordingEnv {
  env: ApplyEnv
  awsWrites: AwsWrite[]
  kubeWrites: KubeWrite[]
}

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T))

export function recordingEnv(
  o: {
    aws?: Record<string, AwsAnswer>
    kube?: Record<string, unknown>
  } = {},
): RecordingEnv {
  const awsWrites: AwsWrite[] = []
  const kubeWrites: KubeWrite[] = []
  const answer = async (_s: string, op: string, input: Record<string, unknown> = {}) => {
    const a = o.aws?.[op]
    if (!a) throw Object.assign(new Error(`${op} not found`), { name: 'NoSuchEntity' })
    return clone(a(input))
  }
  const kubeRead = async (path: string) => clone(o.kube?.[path] ?? null)
  const env = {
    aws: {
      call: answer,
      write: async (_s: string, op: string, input: Record<string, unknown>) => {
        awsWrites.push({ op, input: clone(input) })
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
  return { env, awsWrites, kubeWrites }
}
