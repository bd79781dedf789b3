// Public entry of the karpctl e2e test bed. See README.md.
export * from './constants.js'
export { startBed, type Bed, type BedOptions, type KarpenterBed, type Proc } from './bed.js'
export {
  KubeClient,
  KubeError,
  objectPath,
  pluralOf,
  type KubeCreds,
  type KubeObject,
} from './kube-client.js'
export * from './seed.js'
export * from './kube-seed.js'
export {
  artifacts,
  karpenterFixtures,
  karpenterChartDir,
  cloudFormationTemplatePath,
  REPO_ROOT,
} from './paths.js'
export { runCommand, runKarpctl, targetArgs, type RunOptions, type RunResult } from './run.js'
export { groupAlive, waitFor } from './proc.js'
export * from './install-seed.js'
export * from './cloudformation.js'
export * from './adopted-seed.js'
export * from './terraform-seed.js'
export * from './full-inventory.js'
export * from './cli.js'
export * from './printed.js'
export { KARPENTER_VERSION, controllerEnv, type KarpenterController } from './karpenter.js'
export { registerNode, expireRegistration, UNREGISTERED_TAINT, type Kubelet } from './kubelet.js'
export * from './matrix-seed.js'
export { playPdbStatus } from './pdb-status.js'
export * from './kill.js'
export * from './blueprints-seed.js'
