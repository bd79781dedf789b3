// Mutation testing of the pure judging code: doctor's checks, the IAM evaluator (src/policy) and the lint
// (issue 12, item 8), and of the engine's plan, its specs and the commands built on them: install,
// teardown, tenant and fix (issue 18). Run with `npm run test:mutation`; it is not part of `npm test`
// (it takes a long time). Unset, it runs the judging code; `STRYKER_SCOPE=<directory>` runs one
// directory, with its own report and its own incremental file, so a run stays bounded and one
// directory's results never overwrite another's. A whole engine directory takes hours on two cores:
// narrow it with `-- --mutate <file>,<file>`.
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(fileURLToPath(import.meta.url))
// Unset, the scope is the judging code (as before issue 18); the engine's directories run one at a time.
const judging = ['checks', 'policy', 'iam', 'lint']
const scopes = [...judging, 'plan', 'desired', 'install', 'teardown', 'tenant', 'fix']
const scope = process.env.STRYKER_SCOPE ?? 'all'
if (scope !== 'all' && !scopes.includes(scope)) {
  throw new Error(
    `STRYKER_SCOPE must be one of ${scopes.join(', ')} (or unset for ${judging.join(', ')}), not ${scope}`,
  )
}
const dirs = scope === 'all' ? judging : [scope]

// The unit tests of the engine and the commands built on it.
const engine = {
  plan: 'test/unit/plan/**/*.test.ts',
  desired: 'test/unit/desired/**/*.test.ts',
  install: 'test/unit/install/**/*.test.ts',
  teardown: 'test/unit/teardown/**/*.test.ts',
  tenant: 'test/unit/tenant/**/*.test.ts',
  fix: 'test/unit/fix/**/*.test.ts',
}

// The unit tests that run each directory's code: its own, and those of the code built on it (the
// checks run the IAM evaluator; fix and report run the checks; install, teardown, tenant and fix
// run the plan's resources, which are built from the desired state, tenant removal among them).
const testsOf = {
  checks: ['test/unit/checks/**/*.test.ts', 'test/unit/fix/**/*.test.ts'],
  // The IAM policy language (document types and the local evaluator) is judged by its own tests and by
  // every evaluator built on it.
  policy: [
    'test/unit/policy/**/*.test.ts',
    'test/unit/iam/**/*.test.ts',
    'test/unit/checks/**/*.test.ts',
    'test/unit/fix/**/*.test.ts',
    'test/unit/report/**/*.test.ts',
    'test/unit/redact/redact-corpus.test.ts',
  ],
  iam: [
    'test/unit/iam/**/*.test.ts',
    'test/unit/checks/**/*.test.ts',
    'test/unit/fix/**/*.test.ts',
    'test/unit/report/**/*.test.ts',
    'test/unit/redact/redact-corpus.test.ts',
  ],
  lint: ['test/unit/lint/**/*.test.ts'],
  plan: Object.values(engine),
  desired: Object.values(engine),
  install: [engine.install, engine.plan, engine.desired, engine.tenant, engine.fix],
  teardown: [engine.teardown],
  // tenantContext builds its own clients (createRunContext): its tests drive it over nock.
  tenant: [engine.tenant, engine.teardown, engine.desired, 'test/integration/tenant-context.test.ts'],
  // runFix builds its own clients (createRunContext): its tests drive it over nock.
  fix: [engine.fix, 'test/integration/fix-run.test.ts', 'test/integration/owners.test.ts'],
}

// Stryker runs the tests in a sandbox copy under .stryker-tmp/: point them at the repository's own
// reference data rather than copying its 1.3 MB into every sandbox.
process.env.KARPCTL_FIXTURES ??= resolve(root, 'test', 'fixtures', 'karpenter')

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  // The reference templates are data generated from test/fixtures' CloudFormation templates; the lint's
  // `scripts/reference-policies.ts --check` fails on any byte that differs from a fresh generation.
  mutate: [...dirs.map((d) => `src/${d}/**/*.ts`), '!src/desired/reference-policies.generated.ts'],
  testRunner: 'tap',
  tap: {
    // STRYKER_TESTS=<glob>,<glob> narrows a run to those tests while a file's tests are written: its
    // score is then a lower bound of the scope's (fewer tests kill fewer mutants), reached in minutes.
    testFiles: process.env.STRYKER_TESTS?.split(',') ?? [...new Set(dirs.flatMap((d) => testsOf[d]))],
    // One node process per test file, running the file itself (no `--test`: that would run it in a
    // child process, out of reach of the hook that records which mutants each file covers).
    nodeArgs: ['--import', 'tsx', '--test-reporter=tap', '-r', '{{hookFile}}', '{{testFile}}'],
    forceBail: true,
  },
  // Each mutant runs only the test files that execute it.
  coverageAnalysis: 'perTest',
  // The machine is shared: at most two test processes at a time.
  concurrency: 2,
  timeoutMS: 10000,
  // Re-runs test only the mutants whose code or covering tests changed. The file is a local cache
  // (gitignored under reports/): it churns with every change and is rebuilt by a full run.
  incremental: true,
  incrementalFile: join('reports', 'mutation', `${scope}.incremental.json`),
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: join('reports', 'mutation', `${scope}.html`) },
  jsonReporter: { fileName: join('reports', 'mutation', `${scope}.json`) },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // What the sandbox does not need: the build and the e2e bed (the fix scope runs nock integration tests).
  ignorePatterns: [
    'dist',
    'bench',
    'test/e2e',
    'test/fixtures/karpenter',
    'reports',
    'coverage',
    'scratch',
    '.stryker-tmp*',
  ],
  // One sandbox directory per scope, so two scopes can run side by side.
  tempDirName: `.stryker-tmp-${scope}`,
  // The engine's scopes run every engine test with coverage first: minutes on a loaded machine.
  dryRunTimeoutMinutes: 30,
  cleanTempDir: 'always',
}
