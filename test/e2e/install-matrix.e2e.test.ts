// Issue 35, B: every tool's healthy default install is clean. One bed, reset between rows (moto reset,
// the release, Karpenter's objects and CRDs, aws-auth and nodes deleted); each row seeds one tool's
// default install (bed/matrix-seed.ts says what each is, from which source) with the controller played,
// then: doctor has no failing and no warning check, the checks that cannot be judged on moto are
// exactly the row's `unknown` (each with its reason), and `doctor --fix --yes` makes no write.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  checkLines,
  fullInventory,
  GETTING_STARTED_VERSIONS,
  installOn,
  inventoryDiff,
  karpctlOn,
  parseJsonOut,
  playController,
  resetBed,
  seedBareForKarpctl,
  seedBlueprintsAddons,
  seedEksctlKarpenter,
  seedGettingStartedOf,
  seedTerraformModule,
  shown,
  startBed,
  type Bed,
  type DoctorJson,
  type FixJson,
  type MatrixInstall,
} from './bed/index.js'

interface Row {
  tool: string
  /** where the install's shape comes from */
  source: string
  seed: (bed: Bed) => Promise<MatrixInstall>
  /** what the tool runs after its resources exist (karpctl's own install) */
  then?: (bed: Bed) => Promise<void>
  /** check id → the reason it cannot be judged here (moto lacks the API) */
  unknown?: Record<string, RegExp>
  /** the CRDs the row brings: 1.0.x's own; karpctl's (its karpenter-crd release); else the 1.14.1 chart's */
  crds?: '1.0' | 'karpenter-crd'
  /** check id → a warning that is true of that tool's default (none is a false alarm: see each row) */
  warn?: Record<string, RegExp>
}

// moto 5.2.1 answers EKS access entries with 404: what depends on them is unknown, never a pass. (Pod
// Identity associations and add-ons it lacks too: bed/moto_launcher.py fills them.)
const ACCESS_ENTRIES_UNKNOWN = /could not read eks:ListAccessEntries/

const ROWS: Row[] = [
  ...GETTING_STARTED_VERSIONS.map((v): Row => ({
    tool: `getting-started CloudFormation v${v}`,
    source: `test/fixtures/karpenter/policies/cloudformation-v${v}.yaml; karpenter.sh getting started (helm values)`,
    seed: (bed) => seedGettingStartedOf(bed, v),
    // True of every 1.0.x: its conversion webhooks run until 1.1 (Karpenter's v1 migration guide).
    ...(v.startsWith('1.0.')
      ? { crds: '1.0' as const, warn: { 'karpenter-version': /v1\.0\.x conversion line/ } }
      : {}),
  })),
  {
    tool: 'terraform-aws-eks modules/karpenter v20 (IRSA)',
    source: 'terraform-aws-eks v20.37.2 modules/karpenter/{main,policy,variables}.tf, examples/karpenter',
    seed: (bed) => seedTerraformModule(bed, 20),
    unknown: { 'node-role': ACCESS_ENTRIES_UNKNOWN },
  },
  {
    tool: 'terraform-aws-eks modules/karpenter v21 (Pod Identity)',
    source: 'terraform-aws-eks v21.19.0 modules/karpenter/{main,policy,variables}.tf, examples/karpenter',
    seed: (bed) => seedTerraformModule(bed, 21),
    // The association (the module's) and the agent add-on (the example's) are real on the patched
    // moto: pod-identity, controller-policy and passrole-node-role judge the role they name.
    unknown: { 'node-role': ACCESS_ENTRIES_UNKNOWN },
  },
  {
    tool: 'eksctl karpenter: block',
    source:
      'eksctl-io/eksctl pkg/cfn/builder/karpenter.go, pkg/actions/karpenter/create.go, pkg/karpenter/karpenter.go',
    seed: seedEksctlKarpenter,
    // True: eksctl's policy is one statement on Resource "*" without the reference's tag conditions.
    warn: {
      'controller-policy': /more broadly than the reference \(Resource "\*" where the reference names ARNs/,
    },
  },
  {
    tool: 'EKS Blueprints addons karpenter (chart_version 1.1.10)',
    source:
      'aws-ia/terraform-aws-eks-blueprints-addons main.tf "Karpenter" (enable_karpenter, defaults), aws-ia/eks-blueprints-addon 1.3.0 main.tf (IRSA)',
    seed: seedBlueprintsAddons,
    // True of the addon's defaults: its policy predates the reference's resource lists and tag
    // conditions; its node role has three policies (no AmazonSSMManagedInstanceCore).
    warn: {
      'controller-policy':
        /on fewer resources than the reference.*more broadly than the reference \(no Condition where the reference scopes by tags\)/,
      'node-role':
        /lacks AmazonSSMManagedInstanceCore: nodes join, but Session Manager access to them will not work/,
    },
  },
  {
    tool: 'karpctl install',
    source: 'karpctl install --yes on a bare eksctl cluster',
    seed: seedBareForKarpctl,
    crds: 'karpenter-crd',
    then: async (bed) => {
      const r = await installOn(bed, ['--yes'])
      assert.equal(r.code, 0, shown(r))
    },
  },
]

describe(
  'install matrix: each tool’s default install, doctor clean, --fix --yes writes nothing',
  { timeout: 60 * 60_000 },
  () => {
    let bed: Bed
    let lastCrds: Row['crds'] | 'none' = 'none'
    before(async () => {
      bed = await startBed({ patchedMoto: true })
    })
    after(async () => {
      await bed?.stop()
    })

    for (const row of ROWS) {
      test(row.tool, async (t) => {
        t.diagnostic(`source: ${row.source}`)
        // CRDs go only when the chart's differ from the last row's (deleting them is the slow part).
        await resetBed(bed, { keepCrds: row.crds === lastCrds })
        lastCrds = row.crds
        const seeded = await row.seed(bed)
        const stopController = playController(bed, seeded.net, seeded.namespace)
        try {
          await row.then?.(bed)
          const r = await karpctlOn(bed, ['doctor', '--json'])
          const report = parseJsonOut<DoctorJson>(r, 'doctor')
          const lines = checkLines(report)
          t.diagnostic(lines)
          const by = (s: string) => report.checks.filter((c) => c.status === s).map((c) => c.id)
          assert.deepEqual(by('fail'), [], lines)
          const unknown = row.unknown ?? {}
          for (const [status, want] of [
            ['warn', row.warn ?? {}],
            ['unknown', unknown],
          ] as const) {
            assert.deepEqual(by(status).sort(), Object.keys(want).sort(), `${status}:\n${lines}`)
            for (const [id, reason] of Object.entries(want)) {
              const c = report.checks.find((x) => x.id === id)!
              assert.match(c.findings.map((f) => f.message).join(' | '), reason, `${id}:\n${lines}`)
            }
          }
          assert.equal(r.code, Object.keys(unknown).length ? 2 : 0, shown(r))

          const before = await fullInventory(bed, seeded.net)
          const fix = await karpctlOn(bed, ['doctor', '--fix', '--yes', '--json'])
          const fixed = parseJsonOut<FixJson>(fix, 'doctor --fix --yes')
          t.diagnostic(`--fix --yes: ${fixed.fix.writes} writes, outcome ${fixed.fix.outcome.kind}`)
          assert.equal(fixed.fix.writes, 0, shown(fix))
          const afterFix = await fullInventory(bed, seeded.net)
          assert.deepEqual(afterFix, before, inventoryDiff(before, afterFix).join('\n'))
        } finally {
          await stopController()
        }
      })
    }
  },
)
