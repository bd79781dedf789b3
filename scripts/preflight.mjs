// What the test commands need before they start, each missing piece said in one line with what to
// install or set (no stack trace): `npm test` runs `node scripts/preflight.mjs`, `npm run test:e2e`
// runs it with `e2e`. Exit 2 on the first thing missing.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const e2e = process.argv.includes('e2e')

function fail(message) {
  console.error(`karpctl ${e2e ? 'e2e' : 'tests'}: ${message}`)
  process.exit(2)
}

/** The tool's `--version` line, or undefined when it does not run. */
function version(tool, args = ['--version']) {
  try {
    return execFileSync(tool, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 })
  } catch {
    return undefined
  }
}

const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 20 || (major === 20 && minor < 12))
  fail(`Node.js 20.12 or newer is needed (this is ${process.version}): install a current Node.js 20 or 22`)
if (!existsSync(join(root, 'node_modules', 'tsx', 'package.json')))
  fail(`the dependencies are not installed in ${root}: run 'npm ci' first`)

const { register } = await import('tsx/esm/api')
register()
const { FixturesMissing, karpenterFixtures } = await import('../test/helpers/fixtures.ts')
try {
  karpenterFixtures()
} catch (e) {
  if (e instanceof FixturesMissing) fail(e.message)
  throw e
}

if (e2e) {
  const go = version('go', ['version'])
  if (!go)
    fail(
      `'go' is not on PATH: the bed builds kube-apiserver, etcd, helm and Karpenter with it; install Go 1.24 or newer`,
    )
  const goMinor = Number(/go1\.(\d+)/.exec(go)?.[1] ?? 0)
  if (goMinor < 24)
    fail(`Go 1.24 or newer is needed to build the bed (found: ${go.trim()}): install a newer Go`)
  if (!version('python3'))
    fail(`'python3' is not on PATH: the bed runs moto_server in a venv; install Python 3.9 or newer`)
  if (!version('python3', ['-m', 'venv', '--help']))
    fail(`python3 has no venv module: install it (Debian/Ubuntu: apt-get install python3-venv)`)
  if (!version('kubectl', ['version', '--client']))
    fail(`'kubectl' is not on PATH: the scenarios replay doctor's printed fixes with it; install kubectl`)
  if (!version('aws'))
    fail(
      `'aws' is not on PATH: the scenarios replay doctor's printed fixes with it; install the AWS CLI (pip install awscli)`,
    )
  if (!version('tmux', ['-V']))
    fail(
      `'tmux' is not on PATH: the install wizard is driven in a real terminal; install tmux (apt-get install tmux)`,
    )
}
