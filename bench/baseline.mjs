// The build the benches compare against: a git ref (default: the commit of `main` this branch started
// from, so branches merged since do not blur the figures; or BASELINE_REF) exported with
// `git archive`, built with its own scripts/build.mjs + `oclif manifest`, and cached in the temp dir by
// commit. It uses this checkout's node_modules (a symlink): the comparison is between the two builds
// and their source, not between dependency trees. BASELINE_DIR points at an already built copy instead.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

function forkPoint() {
  return execFileSync('git', ['merge-base', 'HEAD', 'main'], { cwd: ROOT, encoding: 'utf8' }).trim()
}

/** The directory of the baseline build (its bin/run.js runs it), built on first use. */
export function baselineDir(ref = process.env.BASELINE_REF ?? forkPoint()) {
  if (process.env.BASELINE_DIR) return { dir: process.env.BASELINE_DIR, label: process.env.BASELINE_DIR }
  const sha = execFileSync('git', ['rev-parse', '--short=12', ref], { cwd: ROOT, encoding: 'utf8' }).trim()
  const dir = join(tmpdir(), `karpctl-baseline-${sha}`)
  if (!existsSync(join(dir, 'oclif.manifest.json'))) {
    const tmp = `${dir}.tmp-${process.pid}`
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(tmp, { recursive: true })
    execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C '${tmp}'`], { cwd: ROOT, stdio: 'inherit' })
    symlinkSync(join(ROOT, 'node_modules'), join(tmp, 'node_modules'))
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: tmp, stdio: 'inherit' })
    execFileSync(process.execPath, [join(ROOT, 'node_modules/oclif/bin/run.js'), 'manifest'], {
      cwd: tmp,
      stdio: 'ignore',
    })
    rmSync(dir, { recursive: true, force: true })
    renameSync(tmp, dir) // whole or not at all: a half-built baseline is never reused
  }
  return { dir, label: ref === sha || /^[0-9a-f]{40}$/.test(ref) ? `commit ${sha}` : `${ref} (${sha})` }
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
export const min = (xs) => Math.min(...xs)
