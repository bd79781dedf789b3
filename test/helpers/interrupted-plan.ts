// A child process for the signal tests: a real runPlan over three steps — one quick, a Helm release
// through the real helm wrapper (KARPCTL_HELM: a fake helm that sleeps), one depending on the release.
// It prints `ready` when helm runs, and ends as the CLI does: the error's one line and its exit code.
import { findHelm } from '../../src/context/helm.js'
import { installSignalHandlers } from '../../src/context/interrupt.js'
import { helmRelease } from '../../src/plan/resources/helm-release.js'
import { runPlan } from '../../src/plan/session.js'
import type { Aws } from '../../src/context/aws.js'
import type { Plan, Resource, Step } from '../../src/plan/types.js'
import { bareEnv, fakeResource } from './fake-resource.js'

const fail = (err: { message: string; exitCode: number }) => {
  process.stderr.write(`${err.message}\n`)
  process.exit(err.exitCode)
}
installSignalHandlers(fail)

const step = (resource: Resource): Step => ({
  resource,
  current: null,
  verdict: { action: 'create', changes: [{ field: 'x', to: 1 }] },
})
const release = helmRelease({
  address: 'helm.karpenter-crd',
  release: 'karpenter-crd',
  namespace: 'kube-system',
  chart: 'oci://example/karpenter-crd',
  chartName: 'karpenter-crd',
  expectedVersion: '1.0.0',
  values: { secret: 'hunter2' },
  labels: { 'app.kubernetes.io/managed-by': 'karpctl' },
  adopt: false,
  dependsOn: ['iam-role.quick'],
})
const plan: Plan = {
  title: 'test',
  steps: [
    step(fakeResource('iam-role.quick')),
    step(release as Resource),
    step(fakeResource('kube.after', ['helm.karpenter-crd'])),
  ],
}
const env = { ...bareEnv(), helm: () => findHelm({}) }
runPlan(
  plan,
  env,
  {
    prompter: null,
    yes: true,
    dryRun: false,
    color: false,
    say: (l) => process.stdout.write(`${l}\n`),
    progress: (l) => {
      process.stderr.write(`${l}\n`)
    },
  },
  { aws: {} as Aws, question: () => 'apply?' },
).then(
  () => process.stdout.write('finished\n'),
  (err: { message: string; exitCode?: number }) =>
    fail({ message: err.message, exitCode: err.exitCode ?? 2 }),
)
