// What bin/run.js runs: the CLI bundle (oclif and every command, dist/cli.js) loaded through V8's code
// cache (code-cache.ts), then oclif's execute, exactly as before: same help, version, errors and exits.
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cacheDirectory, loadBundle, type CacheOptions } from './code-cache.js'

/** Set by scripts/build.mjs: karpctl's version and each bundle's content hash, and the command words. */
declare const KARPCTL_BUILD: { version: string; hashes: Record<string, string>; commands: string[] }

interface Cli {
  execute(options: { dir: string }): Promise<unknown>
}

/**
 * Which cache a run uses: runs of one command compile the same code, a help screen other code; anything
 * else (a typo, --version) shares one. Only known words name a file, so argv cannot create many.
 */
export function cacheVariant(argv: string[], commands: string[]): string {
  const words = argv.filter((a) => !a.startsWith('-'))
  let id = 'main'
  for (let n = Math.min(words.length, 2); n > 0; n--) {
    const candidate = words.slice(0, n).join(':')
    if (commands.includes(candidate)) {
      id = candidate
      break
    }
  }
  const help = argv.includes('--help') || argv.includes('-h') || words[0] === 'help'
  return help ? `${id}-help` : id
}

export function cacheOptions(dist: string, argv: string[] = process.argv): CacheOptions {
  const debug = argv.includes('--debug')
  return {
    dir: cacheDirectory(),
    key: (file) =>
      `${KARPCTL_BUILD.version}-${KARPCTL_BUILD.hashes[relative(dist, file).split(sep).join('/')] ?? 'unhashed'}`,
    ...(debug
      ? {
          onError: (what: string, err: unknown) =>
            process.stderr.write(`karpctl: code cache: cannot ${what}: ${String(err)}\n`),
        }
      : {}),
  }
}

export async function run(binUrl: string): Promise<void> {
  const dist = join(dirname(fileURLToPath(binUrl)), '..', 'dist')
  const variant = cacheVariant(process.argv.slice(2), KARPCTL_BUILD.commands)
  const cli = loadBundle(join(dist, 'cli.js'), variant, cacheOptions(dist)) as Cli
  await cli.execute({ dir: binUrl })
}
