// --chart-dir is input: its Chart.yaml files are read only when regular files, and the version they
// declare is held to what karpctl installs, as --karpenter-version is.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import { chartDirVersion, checkChartDir } from '../../../src/plan/resources/helm-release.js'
import { fixturePath } from '../../helpers/fixtures.js'

const root = mkdtempSync(join(tmpdir(), 'karpctl-chart-dir-'))
after(() => rmSync(root, { recursive: true, force: true }))
let n = 0

/** A chart folder whose Chart.yaml holds `text`. */
function chart(text: string): string {
  const dir = join(root, `chart-${++n}`)
  mkdirSync(dir)
  writeFileSync(join(dir, 'Chart.yaml'), text)
  return dir
}

function refusal(fn: () => unknown): InputError {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof InputError, String(err))
    assert.equal(err.code, 'INVALID_CHART_DIR')
    // eslint-disable-next-line no-control-regex
    assert.ok(!/[\n\u001b]/.test(err.message), err.message)
    return err
  }
  assert.fail('accepted')
}

test("a chart folder's version: what its Chart.yaml declares, within 1.0 – 1.14", () => {
  assert.equal(chartDirVersion(chart('apiVersion: v2\nname: karpenter\nversion: 1.14.1\n')), '1.14.1')
  assert.equal(chartDirVersion(chart('version: "v1.0.14"\n')), '1.0.14')
  assert.equal(chartDirVersion(fixturePath('v1.14.1/charts/karpenter')), '1.14.1')
})

test('a Chart.yaml version outside the range, or not x.y.z (../, escape sequences), is refused in one line', () => {
  const cases: [string, RegExp][] = [
    ['version: 0.37.0\n', /declares a version karpctl does not install: karpctl installs Karpenter v1/],
    ['version: 1.15.0\n', /newer than karpctl knows \(1\.14\)/],
    ['version: ../../etc\n', /"\.\.\/\.\.\/etc" is not a Karpenter version/],
    ['version: 1.2.3\u001b[31m\n', /"1\.2\.3\\u001b\[31m" is not a Karpenter version/],
    ['name: karpenter\n', /has no version/],
  ]
  for (const [text, message] of cases)
    assert.match(refusal(() => chartDirVersion(chart(text))).message, message)
})

test('a Chart.yaml that is a FIFO, a directory or missing is refused without blocking', () => {
  const fifoDir = join(root, 'fifo-chart')
  mkdirSync(fifoDir)
  execFileSync('mkfifo', [join(fifoDir, 'Chart.yaml')])
  assert.match(refusal(() => chartDirVersion(fifoDir)).message, /Chart\.yaml" is a FIFO, not a regular file/)
  const dirDir = join(root, 'dir-chart')
  mkdirSync(join(dirDir, 'Chart.yaml'), { recursive: true })
  assert.match(refusal(() => chartDirVersion(dirDir)).message, /is a directory/)
  assert.match(refusal(() => chartDirVersion(join(root, 'none'))).message, /Chart\.yaml" does not exist/)
})

test('checkChartDir: a missing folder is one line; each chart named is checked', () => {
  assert.equal(
    refusal(() => checkChartDir(join(root, 'nowhere'), ['karpenter'])).message,
    `--chart-dir "${join(root, 'nowhere')}" is not a folder: give the folder that holds karpenter-crd/ and karpenter/ of Karpenter 1.0 – 1.14`,
  )
  checkChartDir(fixturePath('v1.14.1/charts'), ['karpenter-crd', 'karpenter'])
  const half = join(root, 'half')
  mkdirSync(join(half, 'karpenter'), { recursive: true })
  writeFileSync(join(half, 'karpenter', 'Chart.yaml'), 'version: 1.14.1\n')
  assert.match(
    refusal(() => checkChartDir(half, ['karpenter-crd', 'karpenter'])).message,
    /karpenter-crd\/Chart\.yaml" does not exist/,
  )
})

test('only the top-level version line counts, with any run of blanks after the colon (or none)', () => {
  // Kills: the regex without `^` (a dependency's indented version read first) and `[ \t]*` → `[ \t]`.
  const nested = 'dependencies:\n  - name: crds\n    version: 1.2.0\nversion: 1.14.1\n'
  assert.equal(chartDirVersion(chart(nested)), '1.14.1')
  assert.equal(chartDirVersion(chart('version:1.13.2\n')), '1.13.2')
  assert.equal(chartDirVersion(chart('version: \t 1.12.0\n')), '1.12.0')
})
