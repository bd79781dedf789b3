// Where the Karpenter reference data is: the one answer for unit, integration and e2e tests, the lint's
// reference-policy check, the generators under scripts/ and the benches.
//
// The repository carries its own copy (test/fixtures/karpenter: upstream files, unmodified, with their
// provenance README and licence), so a clone with nothing beside it tests. KARPCTL_FIXTURES may point
// at another copy (Stryker's sandbox does, and so can a packager).
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Thrown when the reference data is not there; its message is the whole one-line explanation. */
export class FixturesMissing extends Error {
  override name = 'FixturesMissing'
}

/** The folder that holds `v1.14.1/`, `v1.0.14/`, `v0.30.0/` and `policies/`. */
export function karpenterFixtures(): string {
  const fromEnv = process.env.KARPCTL_FIXTURES
  const dir = fromEnv ? resolve(fromEnv) : join(repoRoot, 'test', 'fixtures', 'karpenter')
  if (!existsSync(join(dir, 'policies')) || !existsSync(join(dir, 'v1.14.1'))) {
    throw new FixturesMissing(
      fromEnv
        ? `Karpenter reference data not found at ${dir} (KARPCTL_FIXTURES): point it at a copy of test/fixtures/karpenter, or unset it`
        : `Karpenter reference data not found at ${dir}: restore it with 'git checkout -- test/fixtures/karpenter', or set KARPCTL_FIXTURES to a copy`,
    )
  }
  return dir
}

/** A file or folder inside the reference data, e.g. `v1.14.1/charts/karpenter/values.yaml`. */
export function fixturePath(rel: string): string {
  const p = join(karpenterFixtures(), rel)
  if (!existsSync(p)) throw new FixturesMissing(`Karpenter reference file not found: ${p}`)
  return p
}
