// Which source the SDK's default chain takes a profile's credentials from, in words a user recognises
// (its credential_process, SSO, web identity, an assumed role, the instance metadata service): a bound
// on credential resolution that fires must say what never finished, not only that something did not.
// Pure: the config and credentials files' text and the environment are given.
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { redactClip } from '../redact/redact.js'
import { quote } from '../errors.js'

export type IniSection = Record<string, string>

/**
 * The keys of one section of an AWS ini file (`[profile NAME]` or `[NAME]`, as `header` says), or
 * undefined when the file has no such section. Comments, blank lines and nested sub-sections (the
 * indented lines of an `s3 =` block) are skipped; later keys win, as the SDK reads them.
 */
export function iniSection(text: string, header: (name: string) => boolean): IniSection | undefined {
  let current: IniSection | undefined
  let found: IniSection | undefined
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s*[#;].*$/, '')
    const head = /^\s*\[([^\]]*)\]\s*$/.exec(line)
    if (head) {
      current = header((head[1] ?? '').trim()) ? (found ??= {}) : undefined
      continue
    }
    if (!current || /^\s/.test(line)) continue
    const kv = /^([^=]+)=(.*)$/.exec(line)
    if (kv) current[(kv[1] ?? '').trim().toLowerCase()] = (kv[2] ?? '').trim()
  }
  return found
}

/** A profile as the SDK reads it: `[profile NAME]` (or `[default]`) in config, `[NAME]` in credentials. */
export function profileSections(
  name: string,
  configText: string,
  credentialsText: string,
): { config?: IniSection; credentials?: IniSection } {
  const inConfig = (h: string) =>
    name === 'default'
      ? h === 'default' || h === 'profile default'
      : h.replace(/^profile\s+/, '') === name && h.startsWith('profile')
  return {
    config: iniSection(configText, inConfig),
    credentials: iniSection(credentialsText, (h) => h === name),
  }
}

export interface CredentialSource {
  /** What is being waited on, as a phrase: `its credential_process "…"`. */
  what: string
  /** The command the SDK runs for it (`credential_process`), so a bound can stop it. */
  command?: string
}

/**
 * The source the default chain resolves `profile` from: a profile that names its own (credential_process,
 * SSO, web identity, an assumed role) takes it from there; without a profile (or with static keys) the
 * environment, a web identity token file, the container endpoint, then the instance metadata service.
 * Command lines are redacted (a password may be an argument) and clipped.
 */
export function credentialSource(
  profile: string | undefined,
  read: (name: string) => { config?: IniSection; credentials?: IniSection },
  env: NodeJS.ProcessEnv,
): CredentialSource {
  const seen = new Set<string>()
  const ofProfile = (name: string): CredentialSource | undefined => {
    if (seen.has(name)) return undefined
    seen.add(name)
    const { config = {}, credentials = {} } = read(name)
    const s = { ...config, ...credentials }
    if (s.aws_access_key_id) return { what: 'its static keys' }
    if (s.credential_process)
      return {
        what: `its credential_process ${quote(redactClip(s.credential_process, 120))}`,
        command: s.credential_process,
      }
    if (s.sso_session || s.sso_start_url)
      return {
        what: `AWS IAM Identity Center (SSO${s.sso_session ? ` session ${quote(s.sso_session)}` : ''}; \`aws sso login\` refreshes it)`,
      }
    if (s.web_identity_token_file)
      return { what: `web identity (token file ${quote(redactClip(s.web_identity_token_file, 120))})` }
    if (s.role_arn) {
      const via = s.source_profile
        ? ofProfile(s.source_profile)
        : s.credential_source
          ? { what: `its credential_source ${s.credential_source}` }
          : undefined
      const base = via
        ? `, with ${s.source_profile ? `profile ${quote(s.source_profile)}'s ` : ''}${via.what}`
        : ''
      return { what: `assuming ${quote(redactClip(s.role_arn, 120))}${base}`, command: via?.command }
    }
    return undefined
  }
  const chosen = profile ?? env.AWS_PROFILE
  if (!chosen && env.AWS_ACCESS_KEY_ID) return { what: 'the environment (AWS_ACCESS_KEY_ID)' }
  const own = ofProfile(chosen ?? 'default')
  if (own) return own
  if (env.AWS_WEB_IDENTITY_TOKEN_FILE)
    return {
      what: `web identity (AWS_WEB_IDENTITY_TOKEN_FILE ${quote(redactClip(env.AWS_WEB_IDENTITY_TOKEN_FILE, 120))})`,
    }
  if (env.AWS_CONTAINER_CREDENTIALS_FULL_URI || env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI)
    return { what: 'the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_*_URI)' }
  return { what: "the instance metadata service (IMDS), the default chain's last source" }
}

/** The source of `profile`'s credentials as this machine's AWS files and environment name it. */
export function readCredentialSource(
  profile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): CredentialSource {
  const home = env.HOME || env.USERPROFILE || homedir()
  // Checked to be regular files of bounded size before any client exists (checkAwsConfigFiles).
  const text = (path: string) => {
    try {
      return readFileSync(path, 'utf8')
    } catch {
      return ''
    }
  }
  const config = text(env.AWS_CONFIG_FILE || join(home, '.aws', 'config'))
  const credentials = text(env.AWS_SHARED_CREDENTIALS_FILE || join(home, '.aws', 'credentials'))
  return credentialSource(profile, (name) => profileSections(name, config, credentials), env)
}
