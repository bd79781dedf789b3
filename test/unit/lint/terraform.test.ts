import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import { lintTerraformDir } from '../../../src/lint/terraform.js'
import { repoRoot } from '../../helpers/fixtures.js'

const dir = join(repoRoot, 'test/fixtures/lint/terraform')

test('helm_release karpenter: set blocks without type = "string" that Helm would type are reported with file and line', async () => {
  const r = await lintTerraformDir(dir)
  assert.deepEqual(r.files, ['main.tf'])
  assert.deepEqual(r.releases, ['main.tf helm_release.karpenter'])
  const sets = r.issues.filter((i) => i.source === 'main.tf helm_release.karpenter')
  assert.deepEqual(
    sets.map((i) => [i.path, i.value, i.file, i.line]),
    [
      ['serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints', true, 'main.tf', 14],
      ['tolerations[0].value', true, 'main.tf', 19],
    ],
  )
  assert.match(sets[0]!.message, /has no type = "string": Helm parses it as a boolean/)
  assert.match(sets[0]!.fix, /type = "string"/)
})

test('a set with type = "string", a plain word, or a non-target name is not reported; other charts are ignored', async () => {
  const r = await lintTerraformDir(dir)
  const paths = r.issues.map((i) => i.path)
  assert.ok(!paths.includes('podAnnotations.prometheus\\.io/port'))
  assert.ok(!paths.includes('podLabels.team'))
  assert.ok(!paths.some((p) => p.startsWith('controller.')))
})

test('values: yamlencode, heredoc and file() are linted; templatefile is noted as skipped', async () => {
  const r = await lintTerraformDir(dir)
  const bySource = (s: string) =>
    r.issues.filter((i) => i.source === s).map((i) => [i.path, i.value, i.file, i.line])
  assert.deepEqual(bySource('main.tf helm_release.karpenter values[0]'), [
    ['nodeSelector.karpenter\\.sh/controller', true, 'main.tf', 36],
  ])
  assert.deepEqual(bySource('main.tf helm_release.karpenter values[1]'), [
    ['additionalLabels.cost-center', 1234, 'main.tf', 40],
  ])
  assert.deepEqual(bySource('karpenter-values.yaml'), [
    ['podAnnotations.sidecar\\.istio\\.io/inject', false, 'karpenter-values.yaml', 2],
  ])
  assert.equal(r.notes.length, 1)
  assert.match(r.notes[0]!, /values\[3\].*templatefile.*not linted/)
})

test('a clean helm_release gives no issues; expressions are noted, not guessed', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'karpctl-tf-'))
  try {
    writeFileSync(
      join(tmp, 'karpenter.tf'),
      `resource "helm_release" "k" {
  chart = "oci://public.ecr.aws/karpenter/karpenter"
  set = [
    { name = "tolerations[0].value", value = "true", type = "string" },
    { name = "podLabels.team", value = var.team },
  ]
  values = var.values
}
`,
    )
    const r = await lintTerraformDir(tmp)
    assert.deepEqual(r.issues, [])
    assert.equal(r.notes.length, 2)
    assert.match(r.notes.join('\n'), /takes its value from \$\{var\.team\}/)
    assert.match(r.notes.join('\n'), /values is an expression/)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
})

test('invalid HCL and a missing directory throw InputError', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'karpctl-tf-'))
  try {
    writeFileSync(join(tmp, 'bad.tf'), 'resource "helm_release" "k" {\n  chart = "karpenter"\n')
    await assert.rejects(
      lintTerraformDir(tmp),
      (err: unknown) => err instanceof InputError && /^bad\.tf:\d+: invalid HCL: /.test(err.message),
    )
    await assert.rejects(lintTerraformDir(join(tmp, 'nope')), InputError)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
})
