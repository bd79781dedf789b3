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

// Helm falls back to Docker's config for a registry its own has no entry for (oras-go
// NewStoreWithFallbacks, helm pkg/registry/client.go): a stale `docker login public.ecr.aws` 403s too.
const DOCKER = '/home/dev/.docker/config.json'
const withDocker = (helm: string[] | null, docker: string[]) =>
  healthyFacts((f) => {
    f.local.helmRegistry = ok(helm ? { path: PATH, registries: helm } : null)
    f.local.dockerRegistry = ok({ path: DOCKER, registries: docker })
  })

test("a public.ecr.aws entry in Docker's config, none in Helm's, warns with docker logout alone", () => {
  const r = runCheck(helmRegistryAuth, withDocker(null, ['public.ecr.aws']))
  assert.equal(r.status, 'warn')
  const finding = r.findings[0]!
  assert.equal(finding.subject, DOCKER)
  assert.match(
    finding.message,
    /\.docker\/config\.json stores credentials for public\.ecr\.aws, which Helm sends/,
  )
  // helm registry logout leaves Docker's entry (it deletes from Helm's own store only)
  assert.deepEqual(finding.fix?.commands, ['docker logout public.ecr.aws'])
})

test("Helm's own entry wins: it is the one reported, with both logouts", () => {
  const r = runCheck(helmRegistryAuth, withDocker(['public.ecr.aws'], ['public.ecr.aws']))
  assert.equal(r.findings[0]?.subject, PATH)
  assert.equal(r.findings[0]?.fix?.commands?.length, 2)
})

test("Docker's other registries pass, and say what was read", () => {
  const r = runCheck(helmRegistryAuth, withDocker(null, ['ghcr.io']))
  assert.equal(r.status, 'pass')
  assert.match(
    r.findings[0]?.message ?? '',
    /no public\.ecr\.aws entry in \/home\/dev\/\.docker\/config\.json/,
  )
  assert.equal(runCheck(helmRegistryAuth, withDocker(['ghcr.io'], ['ghcr.io'])).status, 'pass')
})

test("an unreadable Docker config is unknown when Helm's has no entry (never a pass)", () => {
  const r = runCheck(
    helmRegistryAuth,
    healthyFacts((f) => (f.local.dockerRegistry = failed('local:read ~/.docker/config.json', 'EACCES'))),
  )
  assert.equal(r.status, 'unknown')
})

test('a snapshot from before Docker was read is judged on Helm’s config alone', () => {
  const r = runCheck(
    helmRegistryAuth,
    healthyFacts((f) => delete f.local.dockerRegistry),
  )
  assert.equal(r.status, 'pass')
})
