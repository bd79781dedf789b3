// The environment the built CLI runs in for the bad-input suites: everything a user's machine would
// lend it (home, caches, kubeconfig, AWS config, instance metadata) pointed into the test's folder.
import { join } from 'node:path'

export function isolatedEnv(
  dir: string,
  env: Record<string, string | undefined> = {},
): Record<string, string> {
  const all: Record<string, string | undefined> = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, '.config'),
    XDG_CACHE_HOME: join(dir, '.cache'),
    XDG_DATA_HOME: join(dir, '.local', 'share'),
    KUBECONFIG: join(dir, 'no-kubeconfig'),
    AWS_CONFIG_FILE: join(dir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    NO_COLOR: '1',
    ...env,
  }
  // Undefined: the variable is unset for the run.
  return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined))
}
