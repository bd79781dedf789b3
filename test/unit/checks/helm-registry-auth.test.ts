import assert from 'node:assert/strict'
import { test } from 'node:test'
import { helmRegistryAuth } from '../../../src/checks/helm-registry-auth.js'
import { runCheck } from '../../../src/checks/run.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

const PATH = '/home/dev/.config/helm/registry/config.json'
const withRegistries = (registries: string[]) =>
  healthyFacts((f) => {
    f.local.helmRegistry = ok({ path: PATH, registries })
  })

test('no registry config passes', () => {
  const r = runCheck(helmRegistryAuth, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]?.message ?? '', /pulled anonymously/)
})

test('credentials for other registries only pass', () => {
  const r = runCheck(
    helmRegistryAuth,
    withRegistries(['ghcr.io', '123456789012.dkr.ecr.us-west-2.amazonaws.com']),
  )
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[0]?.subject, PATH)
})

test('stored public.ecr.aws credentials warn with the logout commands', () => {
  const r = runCheck(helmRegistryAuth, withRegistries(['ghcr.io', 'public.ecr.aws']))
  assert.equal(r.status, 'warn')
  const finding = r.findings[0]!
  assert.equal(finding.subject, PATH)
  assert.match(finding.message, /credentials for public\.ecr\.aws.*403 Forbidden/)
  assert.deepEqual(finding.evidence?.ecrPublicEntries, ['public.ecr.aws'])
  assert.deepEqual(finding.fix?.commands, [
    'helm registry logout public.ecr.aws',
    'docker logout public.ecr.aws',
  ])
})

test('entries with a scheme or a path are recognised', () => {
  assert.equal(runCheck(helmRegistryAuth, withRegistries(['https://public.ecr.aws'])).status, 'warn')
  assert.equal(runCheck(helmRegistryAuth, withRegistries(['public.ecr.aws/karpenter'])).status, 'warn')
  assert.equal(runCheck(helmRegistryAuth, withRegistries(['public.ecr.aws.example.com'])).status, 'pass')
})

test('a failed read of the config is unknown', () => {
  const r = runCheck(
    helmRegistryAuth,
    healthyFacts(
      (f) => (f.local.helmRegistry = failed('local:read ~/.config/helm/registry/config.json', 'EACCES')),
    ),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]?.message ?? '', /EACCES/)
})
