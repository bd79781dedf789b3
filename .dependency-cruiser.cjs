// The house's floors, checked by `npm run lint` (issue 39): no import loop, and no arrow from a lower
// layer to a higher one. Bottom to top: redact, policy (the IAM policy language: its document types and
// the local evaluator, pure) → context (clients) → facts → iam, checks, desired → plan (the engine,
// with its waits and the removal of a tenant) → the use cases (install, tenant, teardown, upgrade, fix,
// why, doctor, fleet) → commands, report.
const useCases = '^src/(install|tenant|teardown|upgrade|fix|why|doctor|fleet)/'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'engine-imports-no-use-case',
      severity: 'error',
      from: { path: '^src/plan/' },
      to: { path: [useCases, '^src/commands/'] },
    },
    {
      name: 'judging-imports-no-engine',
      severity: 'error',
      from: { path: '^src/(redact|policy|context|facts|iam|checks|desired)/' },
      to: { path: ['^src/plan/', useCases, '^src/commands/'] },
    },
    {
      name: 'clients-look-down',
      severity: 'error',
      from: { path: '^src/context/' },
      to: { path: '^src/(facts|checks|iam|desired|report|lint)/' },
    },
    {
      name: 'redact-is-the-floor',
      severity: 'error',
      from: { path: '^src/redact/' },
      to: { path: '^src/(?!redact/)' },
    },
    {
      name: 'use-cases-do-not-reach-sideways',
      severity: 'error',
      from: { path: '^src/(install|tenant|teardown|upgrade|fix|why|doctor|fleet)/' },
      to: { path: useCases, pathNot: '^src/$1/' },
    },
    {
      name: 'facts-do-not-judge',
      severity: 'error',
      // Facts may evaluate a policy where IAM's simulator cannot (collect-iam's PassRole fallback) with
      // the pure evaluator in src/policy/, never through the judges above them.
      from: { path: '^src/facts/' },
      to: { path: '^src/(checks|iam)/' },
    },
    {
      name: 'policy-is-pure',
      severity: 'error',
      from: { path: '^src/policy/' },
      to: { path: '^src/(?!policy/)' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
}
