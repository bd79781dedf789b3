// The command line both generators share: write the generated file, or with --check exit 1 when the
// file is not what the generator would write (npm run lint), and exit 2 in one line when the Karpenter
// reference data is missing.
import { readFileSync, writeFileSync } from 'node:fs'
import { FixturesMissing } from '../test/helpers/fixtures.js'

export async function writeOrCheck(
  name: string,
  target: string,
  generate: () => Promise<string>,
): Promise<void> {
  const text = await generate().catch((e: unknown) => {
    if (!(e instanceof FixturesMissing)) throw e
    console.error(`${name}: ${e.message}`)
    process.exit(2)
  })
  if (process.argv.includes('--check')) {
    if (readFileSync(target, 'utf8') !== text) {
      console.error(`${target} is stale: run node --import tsx scripts/${name}.ts`)
      process.exit(1)
    }
  } else {
    writeFileSync(target, text)
  }
}
