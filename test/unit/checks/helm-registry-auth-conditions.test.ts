// The conditions helm-registry-auth judges, one at a time (issue 12, item 8: mutation testing): no
// registry config, a config without public.ecr.aws, and stored public.ecr.aws credentials however the
// key is written (scheme, path, case). Each finding is pinned exact.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { helmRegistryAuth } from '../../../src/checks/helm-registry-auth.js'
import { runCheck } from '../../../src/checks/run.js'
import { healthyFacts, ok } from '../../helpers/facts.js'

const PATH = '/home/dev/.config/helm/registry/config.json'
const run = (registries: string[]) =>
  runCheck(
    helmRegistryAuth,
    healthyFacts((f) => {
      f.local.helmRegistry = ok({ path: PATH, registries })
    }),
  ).findings
const stored = (registries: string[]) => run(registries)[0]?.evidence?.ecrPublicEntries

test('helm-registry-auth is a warning-severity local check', () => {
  assert.equal(helmRegistryAuth.meta.id, 'helm-registry-auth')
  assert.equal(helmRegistryAuth.meta.severity, 'warning')
  assert.equal(helmRegistryAuth.meta.category, 'local')
})

test('no registry config: one pass, no subject', () => {
  assert.deepEqual(runCheck(helmRegistryAuth, healthyFacts()).findings, [
    {
      status: 'pass',
      message: 'no Helm registry config on this machine: public.ecr.aws is pulled anonymously',
    },
  ])
})

test('a config without public.ecr.aws: pass, its registries as evidence', () => {
  assert.deepEqual(run(['ghcr.io', 'quay.io/public.ecr.aws']), [
    {
      status: 'pass',
      subject: PATH,
      message: `${PATH} stores no credentials for public.ecr.aws: the chart is pulled anonymously`,
      evidence: { path: PATH, registries: ['ghcr.io', 'quay.io/public.ecr.aws'] },
    },
  ])
})

test('stored public.ecr.aws credentials: warn, exact, each entry named', () => {
  const registries = ['ghcr.io', 'public.ecr.aws', 'oci://Public.ECR.aws/karpenter']
  assert.deepEqual(run(registries), [
    {
      status: 'warn',
      subject: PATH,
      message: `${PATH} stores credentials for public.ecr.aws, oci://Public.ECR.aws/karpenter: once that ECR Public token expires (12 h), helm pull/install of oci://public.ecr.aws/karpenter/karpenter fails with 403 Forbidden`,
      evidence: {
        path: PATH,
        registries,
        ecrPublicEntries: ['public.ecr.aws', 'oci://Public.ECR.aws/karpenter'],
      },
      fix: {
        summary:
          'log out so Helm pulls anonymously (or refresh the token with: aws ecr-public get-login-password --region us-east-1 | helm registry login --username AWS --password-stdin public.ecr.aws)',
        commands: ['helm registry logout public.ecr.aws', 'docker logout public.ecr.aws'],
      },
    },
  ])
})

test('only a leading scheme is stripped, and the host must be exactly public.ecr.aws', () => {
  assert.deepEqual(stored(['HTTPS://public.ecr.aws']), ['HTTPS://public.ecr.aws'])
  assert.equal(run(['x-https://public.ecr.aws'])[0]?.status, 'pass')
  assert.equal(run(['https:/public.ecr.aws'])[0]?.status, 'pass')
  assert.equal(run(['1://public.ecr.aws'])[0]?.status, 'pass')
  assert.equal(run(['mirror/public.ecr.aws'])[0]?.status, 'pass')
  assert.equal(run(['public.ecr.aws.mirror'])[0]?.status, 'pass')
  assert.equal(run(['https://https://public.ecr.aws'])[0]?.status, 'pass')
})
