import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { dockerRegistryConfig, helmRegistryConfig } from '../../../src/facts/collect-local.js'

function configIn(dir: string, body: unknown): string {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'config.json')
  writeFileSync(path, JSON.stringify(body))
  return path
}

test("Docker's config is read from $DOCKER_CONFIG: registry names only, never the tokens", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-docker-'))
  const path = configIn(dir, { auths: { 'public.ecr.aws': { auth: 'QVdTOnNlY3JldA==' }, 'ghcr.io': {} } })
  const read = await dockerRegistryConfig({ DOCKER_CONFIG: dir })
  assert.deepEqual(read, { path, registries: ['public.ecr.aws', 'ghcr.io'] })
  assert.doesNotMatch(JSON.stringify(read), /QVdT/)
})

test('without $DOCKER_CONFIG it is ~/.docker/config.json; none there is null', async () => {
  const home = mkdtempSync(join(tmpdir(), 'karpctl-home-'))
  const saved = process.env.HOME
  process.env.HOME = home
  try {
    assert.equal(await dockerRegistryConfig({}), null)
    const path = configIn(join(home, '.docker'), { auths: { 'public.ecr.aws': {} } })
    assert.deepEqual(await dockerRegistryConfig({}), { path, registries: ['public.ecr.aws'] })
  } finally {
    process.env.HOME = saved
  }
})

test('a registry with its own credential helper is not a stored token (the helper fetches a fresh one)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-docker-'))
  configIn(dir, { auths: { 'public.ecr.aws': {} }, credHelpers: { 'public.ecr.aws': 'ecr-login' } })
  assert.deepEqual((await dockerRegistryConfig({ DOCKER_CONFIG: dir }))?.registries, [])
})

test("Helm's registry config keeps its own lookup (HELM_REGISTRY_CONFIG first)", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-helm-'))
  const path = configIn(dir, { auths: { 'public.ecr.aws': {} } })
  assert.deepEqual(await helmRegistryConfig({ HELM_REGISTRY_CONFIG: path }), {
    path,
    registries: ['public.ecr.aws'],
  })
})
