import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { HelmRegistryConfig } from './types.js'

/** Helm's registry config: the registries it holds credentials for (never the credentials). */
export async function helmRegistryConfig(
  env: NodeJS.ProcessEnv = process.env,
): Promise<HelmRegistryConfig | null> {
  const configHome = env.HELM_CONFIG_HOME ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'helm')
  const path = env.HELM_REGISTRY_CONFIG ?? join(configHome, 'registry', 'config.json')
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return null
  }
  const parsed = JSON.parse(text) as { auths?: Record<string, unknown> }
  return { path, registries: Object.keys(parsed.auths ?? {}) }
}
