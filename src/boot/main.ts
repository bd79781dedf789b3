// What bin/run.js runs: the CLI bundle (oclif and every command, dist/cli.js) loaded through V8's code
// cache (code-cache.ts), then oclif's execute, exactly as before: same help, version, errors and exits.
import { dirname, join, relative, sep } from 'node:path'
import { cacheDirectory, loadBundle, type CacheOptions } from './code-cache.js'
import { helpFiles, mayShowHelp, readScreen, recordHelpTo, screenFile, screenKey } from './help-cache.js'
import { guardStdout } from './stdout.js'

/**
 * Set by scripts/build.mjs: karpctl's name and version, each bundle's content hash, the command words,
 * and the flags that print the version (none when an `init` hook would have to run first).
 */
declare const KARPCTL_BUILD: {
  name: string
  version: string
  hashes: Record<string, string>
  commands: string[]
  versionFlags: string[]
  /** package.json `engines.node`, and the minimum it names as [major, minor, patch]. */
  engines: string
  nodeMin: [number, number, number]
  helpFlags: string[]
  topics: string[]
}

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

/**
 * The line oclif prints for `--version` (its Config.userAgent: name/version platform-arch node-version,
 * with WSL told apart from Linux by the same package oclif asks).
 */
export async function versionLine(name: string, version: string): Promise<string> {
  const { default: isWsl } = await import('is-wsl')
  const platform = isWsl ? 'wsl' : process.platform
  const arch = process.arch === 'ia32' ? 'x86' : process.arch
  return `${name}/${version} ${platform}-${arch} node-${process.version}`
}

/** Whether Node `version` (process.versions.node) is older than `min`. */
export function olderThan(version: string, min: readonly number[]): boolean {
  const v = version.split('.').map((n) => Number.parseInt(n, 10) || 0)
  for (let i = 0; i < 3; i++) if ((v[i] ?? 0) !== (min[i] ?? 0)) return (v[i] ?? 0) < (min[i] ?? 0)
  return false
}

/** Runs karpctl from `binDir`, the package's bin/ (oclif finds package.json and the manifest above it). */
export async function run(binDir: string): Promise<void> {
  guardStdout()
  // oclif's warning for a Node older than package.json's engines, in its words, without the semver
  // package it loads for it on every start (its own check is turned off while the bundle loads).
  if (olderThan(process.versions.node, KARPCTL_BUILD.nodeMin))
    process.emitWarning(
      `Node version must be ${KARPCTL_BUILD.engines} to use this CLI. Current node version: ${process.versions.node}`,
    )
  // oclif answers `--version` from its whole configuration (manifest, plugins, hooks) to print one line
  // known at build time: answered here, it costs a bare Node start, not the CLI bundle's load.
  if (KARPCTL_BUILD.versionFlags.includes(process.argv[2] ?? '')) {
    process.stdout.write(`${await versionLine(KARPCTL_BUILD.name, KARPCTL_BUILD.version)}\n`)
    return
  }
  const root = dirname(binDir)
  const dist = join(root, 'dist')
  if (helpFromCache(root)) return
  const variant = cacheVariant(process.argv.slice(2), KARPCTL_BUILD.commands)
  const before = process.env.OCLIF_DISABLE_ENGINE_WARNING
  process.env.OCLIF_DISABLE_ENGINE_WARNING = '1'
  let cli: Cli
  try {
    cli = loadBundle(join(dist, 'cli.js'), variant, cacheOptions(dist)) as Cli
  } finally {
    // Not left for the programs karpctl runs (helm, exec credential plugins).
    if (before === undefined) delete process.env.OCLIF_DISABLE_ENGINE_WARNING
    else process.env.OCLIF_DISABLE_ENGINE_WARNING = before
  }
  await cli.execute({ dir: root })
}

/**
 * Prints the help screen this invocation showed before, if it is cached (help-cache.ts); else, when it
 * may show one, tells the help class to record it. False: run the CLI.
 */
function helpFromCache(root: string): boolean {
  const argv = process.argv.slice(2)
  const dir = cacheDirectory()
  // No help flags: an init hook must see every run (the build says so).
  if (!dir || KARPCTL_BUILD.helpFlags.length === 0) return false
  if (!mayShowHelp(argv, KARPCTL_BUILD.helpFlags, KARPCTL_BUILD.topics)) return false
  const files = helpFiles(root, process.env, KARPCTL_BUILD.name)
  if (!files) return false
  const build = `${KARPCTL_BUILD.version}-${KARPCTL_BUILD.hashes['cli.js'] ?? 'unhashed'}`
  const file = screenFile(
    dir,
    screenKey(build, {
      argv,
      env: process.env,
      tty: process.stdout.isTTY === true,
      columns: process.stdout.columns,
      files,
    }),
  )
  const screen = readScreen(file)
  if (!screen) {
    recordHelpTo(file)
    return false
  }
  process.stdout.write(screen)
  return true
}
