import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { HelmRegistryConfig } from './types.js'

/** Helm's registry config: the registries it holds credentials for (never the credentials). */
export async function helmRegistryConfig(
  env: NodeJS.ProcessEnv = process.env,
): Promise<HelmRegistryConfig | null> {
  const configHome = env.HELM_CONFIG_HOME ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'helm')
  return registriesIn(env.HELM_REGISTRY_CONFIG ?? join(configHome, 'registry', 'config.json'))
}

/**
 * Docker's config (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`): Helm falls back to it
 * for a registry its own config holds no credentials for. `auths` keys only: with a credsStore the
 * token lives in the store and the key is still listed; a credHelpers entry fetches a fresh one.
 */
export async function dockerRegistryConfig(
  env: NodeJS.ProcessEnv = process.env,
): Promise<HelmRegistryConfig | null> {
  return registriesIn(join(env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json'))
}

async function registriesIn(path: string): Promise<HelmRegistryConfig | null> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return null
  }
  const parsed = JSON.parse(text) as {
    auths?: Record<string, unknown>
    credHelpers?: Record<string, unknown>
  }
  // A registry with its own credential helper gets a fresh token from it, whatever `auths` holds.
  const helped = new Set(Object.keys(parsed.credHelpers ?? {}))
  return { path, registries: Object.keys(parsed.auths ?? {}).filter((r) => !helped.has(r)) }
}
