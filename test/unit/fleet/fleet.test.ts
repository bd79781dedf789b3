import assert from 'node:assert/strict'
import test from 'node:test'
import type { CheckResult, Status } from '../../../src/checks/types.js'
import { byWorst, clusterExit, worstExit } from '../../../src/fleet/fleet.js'
import type { ClusterOutcome } from '../../../src/fleet/types.js'
import { fleetMarkdown, renderFleet } from '../../../src/report/fleet.js'

const result = (id: string, status: Status, severity: 'error' | 'warning' = 'error'): CheckResult => ({
  meta: { id, title: id, category: 'iam', severity, docs: '' },
  status,
  findings: [{ status, message: `${id} is ${status}` }],
})

const outcome = (name: string, o: Partial<ClusterOutcome>): ClusterOutcome => ({
  cluster: {
    name,
    region: 'us-west-2',
    accountId: '123456789012',
    arn: `arn:aws:eks:us-west-2:123456789012:cluster/${name}`,
    principal: {
      label: 'default credentials',
      accountId: '123456789012',
      arn: 'arn:aws:iam::123456789012:user/me',
    },
  },
  state: 'judged',
  results: [],
  access: 'eks-token',
  calls: 10,
  wallTimeMs: 5,
  exitCode: 0,
  ...o,
})

test('exit of one cluster: an error failure 1, an unknown error check 2, warnings 0', () => {
  assert.equal(clusterExit([result('a', 'pass'), result('b', 'fail')]), 1)
  assert.equal(clusterExit([result('a', 'pass'), result('b', 'unknown')]), 2)
  assert.equal(clusterExit([result('a', 'fail'), result('b', 'unknown')]), 1)
  assert.equal(clusterExit([result('a', 'pass'), result('w', 'fail', 'warning')]), 0)
})

test('exit of the fleet is the worst cluster: a failure beats could-not-tell beats clean', () => {
  assert.equal(worstExit([0, 2, 1, 0]), 1)
  assert.equal(worstExit([0, 2, 0]), 2)
  assert.equal(worstExit([0, 0]), 0)
  assert.equal(worstExit([]), 0)
})

const fleet = () => {
  const clusters = [
    outcome('clean', { results: [result('a', 'pass')], karpenterVersion: '1.14.1' }),
    outcome('none', { state: 'no-karpenter', results: [result('a', 'fail')] }),
    outcome('down', { state: 'unknown', reason: 'the Kubernetes API refused the connection', exitCode: 2 }),
    outcome('one', {
      results: [result('a', 'fail'), result('b', 'pass')],
      exitCode: 1,
      karpenterVersion: '1.14.1',
    }),
    outcome('two', {
      results: [result('a', 'fail'), result('b', 'fail'), result('w', 'warn', 'warning')],
      exitCode: 1,
      karpenterVersion: '1.13.0',
    }),
  ].sort(byWorst)
  return {
    clusters,
    gaps: [{ where: 'account 444455556666', reason: 'cannot assume the role' }],
    calls: ['x'],
    exitCode: 1 as const,
  }
}

test('worst first: most failures, then unknown, then clean, then without Karpenter', () => {
  assert.deepEqual(
    fleet().clusters.map((c) => c.cluster.name),
    ['two', 'one', 'down', 'clean', 'none'],
  )
})

test('the table: a row per cluster with verdict, version, identity and what is not clean; then each check and where', () => {
  const lines = renderFleet(fleet(), { color: false }).split('\n')
  assert.match(lines[0]!, /^STATUS\s+CLUSTER\s+KARPENTER\s+IDENTITY\s+CHECKS$/)
  assert.match(
    lines[1]!,
    /^FAIL\s+123456789012\/us-west-2\/two\s+1\.13\.0\s+arn:aws:iam::123456789012:user\/me\s+✖ a, ✖ b, ! w$/,
  )
  assert.match(lines[2]!, /^FAIL\s+\S+\/one\s+1\.14\.1\s+\S+\s+✖ a$/)
  assert.match(lines[3]!, /^UNKNOWN\s+\S+\/down\s+-\s+\S+\s+the Kubernetes API refused the connection$/)
  assert.match(lines[4]!, /^OK\s+\S+\/clean\s+1\.14\.1\s+\S+\s+1 passed$/)
  assert.match(lines[5]!, /^NO KARPENTER\s+\S+\/none\s+-/)
  // The columns line up: every row's CLUSTER starts where the header's does.
  const at = lines[0]!.indexOf('CLUSTER')
  for (const l of lines.slice(1, 6)) assert.equal(l.slice(at).match(/^\d{12}\//)?.length, 1, l)
  const text = lines.join('\n')
  assert.match(text, /^a\s+error\s+✖ two, one$/m)
  assert.match(text, /^b\s+error\s+✖ two$/m)
  assert.match(text, /^w\s+warning\s+! two$/m)
  // A cluster without Karpenter does not count the checks that only say so.
  assert.doesNotMatch(text, /✖ [^\n]*none/)
  assert.match(text, /\? account 444455556666: cannot assume the role/)
  assert.match(
    text,
    /5 clusters: 2 failed, 1 unknown, 1 clean, 1 without Karpenter; 1 place\(s\) not looked at; 1 API calls/,
  )
})

test('markdown carries every cluster, and each judged cluster its own report', () => {
  const md = fleetMarkdown(fleet())
  for (const n of ['two', 'one', 'down', 'clean', 'none']) assert.match(md, new RegExp(`\\/${n}\``))
  assert.equal(md.match(/^## karpctl doctor/gm)?.length, 3)
})
