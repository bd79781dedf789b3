// Help screens from a cache. A help screen is a pure function of the build, the arguments, the terminal
// (TTY or not, its width) and the environment (colour, oclif's and karpctl's variables, user plugins and
// theme files), yet oclif loads its whole configuration to print one: about half of `karpctl doctor
// --help`. The first time a screen is shown, karpctl's help class records what it wrote to stdout; the
// next identical invocation prints those bytes from boot, without loading the CLI bundle.
//
// The key errs towards a miss: it holds every environment variable but those that change on every
// shell without touching output (the working directory, the shell level, session and window ids), so a
// variable nobody thought of can only cost a render, never print a stale screen. Only a hash of the key
// reaches the disk: the environment can hold secrets. A screen is written only when the run exited 0
// and wrote nothing to stderr (no warning is cached, none is lost), via a temporary file renamed into
// place, and the directory keeps the newest screens only.
import { renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { makeCacheDir, readCacheFile } from './cache-dir.js'
import { pruneCaches } from './prune.js'

/** Variables that differ between shells and runs without changing any help screen. */
export const VOLATILE_ENV =
  /^(PWD|OLDPWD|SHLVL|_|TMUX_PANE|WINDOWID|SSH_CLIENT|SSH_CONNECTION|SSH_TTY|GPG_TTY|.*SESSION_ID|.*_SOCK|TERM_SESSION_ID|ITERM_SESSION_ID|STARSHIP_.*|PROMPT_COMMAND|PS1|HISTFILE)$/

/** How many screens the cache directory keeps (each a few kB). */
export const KEEP_SCREENS = 64

/** Where the global recorder finds the file of this run's screen (set by boot, read by the help class). */
const SCREEN_FILE = Symbol.for('karpctl.helpScreenFile')

/**
 * Whether `argv` may show a help screen, as oclif decides it: no argument, a help flag before
 * `--`, or a topic alone (`karpctl tenant`). Anything else never pays for a key.
 */
export function mayShowHelp(argv: string[], helpFlags: string[], topics: string[]): boolean {
  if (argv.length === 0) return true
  for (const a of argv) {
    if (a === '--') break
    if (helpFlags.includes(a)) return true
  }
  return argv.length === 1 && topics.includes(argv[0] as string)
}

/** What a help screen depends on besides the build. */
export interface ScreenInputs {
  argv: string[]
  env: NodeJS.ProcessEnv
  /** stdout is a terminal, and its width (oclif wraps to it; colour follows it). */
  tty: boolean
  columns: number | undefined
  /** The platform, Node's version and oclif's files outside the bundle, each as `path:size:mtime` or absent. */
  files: string[]
}

/** A 106-bit hash (two independent 53-bit cyrb53 halves) of `s`: no crypto module to load at start. */
export function hash(s: string): string {
  const half = (seed: number) => {
    let h1 = 0xdeadbeef ^ seed
    let h2 = 0x41c6ce57 ^ seed
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i)
      h1 = Math.imul(h1 ^ c, 2654435761)
      h2 = Math.imul(h2 ^ c, 1597334677)
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36).padStart(11, '0')
  }
  return half(1) + half(2)
}

/** The key of one screen: the build, then everything in `inputs`, the environment sorted by name. */
export function screenKey(build: string, inputs: ScreenInputs): string {
  const env = Object.keys(inputs.env)
    .filter((k) => !VOLATILE_ENV.test(k))
    .sort()
    .map((k) => `${k}=${inputs.env[k]}`)
  return hash(
    JSON.stringify([build, inputs.argv, inputs.tty, inputs.tty ? inputs.columns : null, inputs.files, env]),
  )
}

/** `path:size:mtime` of a file, or `path:absent`: a rebuilt manifest or an edited theme is a new key. */
export function fileStamp(path: string): string {
  try {
    const s = statSync(path)
    return `${path}:${s.size}:${s.mtimeMs}`
  } catch {
    return `${path}:absent`
  }
}

/**
 * The files outside the bundle oclif reads to render help: package.json, the manifest, and (as
 * oclif finds them) the user's plugins and theme. On Windows oclif puts these elsewhere: no cache.
 */
export function helpFiles(root: string, env: NodeJS.ProcessEnv, bin: string): string[] | undefined {
  if (process.platform === 'win32') return undefined
  const home = homedir()
  const scoped = (k: string) => env[`${bin.toUpperCase().replace(/-/g, '_')}_${k}`]
  const dir = (k: 'DATA' | 'CONFIG', xdg: string | undefined, fallback: string) =>
    scoped(`${k}_DIR`) ?? join(xdg ?? join(home, fallback), bin)
  return [
    `${process.platform}-${process.arch}-${process.version}`,
    fileStamp(join(root, 'package.json')),
    fileStamp(join(root, 'oclif.manifest.json')),
    fileStamp(join(dir('DATA', env.XDG_DATA_HOME, '.local/share'), 'package.json')),
    fileStamp(join(dir('CONFIG', env.XDG_CONFIG_HOME, '.config'), 'theme.json')),
  ]
}

export const screenFile = (dir: string, key: string) => join(dir, `help-${key}.txt`)

/** The cached screen in `file`, or undefined when there is none (or it cannot be read). */
export function readScreen(file: string): Buffer | undefined {
  return readCacheFile(file)
}

/** Tells the help class (in the CLI bundle) where this run's screen is to be recorded. */
export function recordHelpTo(file: string): void {
  ;(globalThis as Record<symbol, unknown>)[SCREEN_FILE] = file
}

/**
 * Called by the help class as it starts rendering: from now on, what reaches stdout is kept, and
 * written to the screen's file at exit if the run exited 0 with nothing on stderr.
 */
export function startRecording(): void {
  const file = (globalThis as Record<symbol, unknown>)[SCREEN_FILE]
  if (typeof file !== 'string') return
  delete (globalThis as Record<symbol, unknown>)[SCREEN_FILE]
  const recorder = recordStreams(process.stdout, process.stderr)
  process.once('exit', (code) => {
    const screen = recorder.finish(code)
    if (screen) saveScreen(file, screen)
  })
}

/** Keeps what is written to `out`; `finish` gives it back unless `err` was written to or `code` is not 0. */
export function recordStreams(out: NodeJS.WriteStream, err: NodeJS.WriteStream) {
  const chunks: Buffer[] = []
  let clean = true
  const outWrite = out.write
  const errWrite = err.write
  out.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array))
    return (outWrite as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
  } as NodeJS.WriteStream['write']
  err.write = function (this: NodeJS.WriteStream, ...args: unknown[]) {
    clean = false
    return (errWrite as (...a: unknown[]) => boolean).apply(this, args)
  } as NodeJS.WriteStream['write']
  return {
    finish(code: number | undefined): Buffer | undefined {
      out.write = outWrite
      err.write = errWrite
      return clean && (code ?? 0) === 0 && chunks.length > 0 ? Buffer.concat(chunks) : undefined
    },
  }
}

/** Writes a screen via a temporary file, then drops the oldest screens beyond {@link KEEP_SCREENS}. */
export function saveScreen(file: string, screen: Buffer, keep = KEEP_SCREENS): void {
  const dir = join(file, '..')
  const tmp = `${file}.${process.pid}.tmp`
  try {
    makeCacheDir(dir)
    writeFileSync(tmp, screen, { mode: 0o600 })
    renameSync(tmp, file)
    pruneCaches(file, (n) => n.startsWith('help-') && n.endsWith('.txt'), keep - 1)
  } catch {
    // A cache that cannot be written costs the next run a render, nothing else.
    try {
      rmSync(tmp, { force: true })
    } catch {
      // no temporary file was made
    }
  }
}
