// The secret corpus (test/helpers/secret-corpus.ts) over `why POD`'s outputs: each judged shape planted
// where why reads free text and prints it — the Events Karpenter wrote about the pod, the controller's
// "could not schedule" log line, the pod's condition message, a NodeClaim's condition message —
// then looked for in the human report, --json, the saved snapshot and the report judged from it.
// The same for `why node`: NodeClaim condition messages and the Events about claims. Planted/leaked
// per output and per half are printed (the held-back half is the measure).
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { jsonText } from '../../../src/report/terminal.js'
import { judge } from '../../../src/why/judge.js'
import { renderWhy } from '../../../src/why/render.js'
import { loadWhySnapshot, saveWhySnapshot } from '../../../src/why/snapshot.js'
import { redactConditionMessages, redactEventMessages, redactWhyFacts } from '../../../src/why/collect.js'
import { judgeNodes } from '../../../src/why/node/judge.js'
import { renderNodes } from '../../../src/why/node/render.js'
import { checkNodeFacts, saveNodeSnapshot } from '../../../src/why/node/snapshot.js'
import type { NodeFacts } from '../../../src/why/node/types.js'
import type { WhyFacts } from '../../../src/why/types.js'
import { CORPUS, leftOut, type Entry } from '../../helpers/secret-corpus.js'
import { pendingPod, whyFacts } from '../../helpers/why.js'
import { ago, event, machine, NOW, nodeFacts } from '../../helpers/why-node.js'

let dir: string
before(() => (dir = mkdtempSync(join(tmpdir(), 'karpctl-redact-why-'))))
after(() => rmSync(dir, { recursive: true, force: true }))

/** One pending pod per entry (each its own request, so each is its own group and prints its own word). */
function planted(entries: Entry[]): WhyFacts {
  const pods = entries.map((_, i) => {
    const p = pendingPod(
      { containers: [{ name: 'app', resources: { requests: { cpu: `${i + 1}m` } } }] },
      `web-${i}`,
    )
    p.metadata.labels = { app: `web-${i}` }
    p.metadata.ownerReferences = []
    return p
  })
  return whyFacts(pods, (f) => {
    entries.forEach((e, i) => {
      const pod = pods[i]!
      const site = i % 4
      if (site === 0)
        (f.events as { value: unknown[] }).value.push({
          metadata: { name: `e${i}`, namespace: 'shop' },
          involvedObject: { kind: 'Pod', namespace: 'shop', name: pod.metadata.name, uid: pod.metadata.uid },
          reason: 'FailedScheduling',
          message: `Failed to schedule pod, ${e.text}`,
          type: 'Warning',
          source: { component: 'karpenter' },
          count: 1,
          lastTimestamp: '2025-01-01T00:00:00Z',
        })
      // The controller's line: Karpenter's reason per NodePool, or its whole error when it names none.
      const logged = site === 1 || site === 3
      if (logged && (f.controllerLog ??= { ok: true, value: [] }).ok)
        (f.controllerLog as { value: unknown[] }).value.push({
          time: '2025-01-01T00:00:00Z',
          pod: `shop/${pod.metadata.name}`,
          ...(site === 1
            ? { nodePools: { default: `incompatible with nodepool "default", ${e.text}` } }
            : { nodePools: {}, error: e.text }),
        })
      if (site === 2) pod.status!.conditions![0]!.message = `0/3 nodes are available: ${e.text}`
    })
  })
}

const found = (entries: Entry[], text: string) => entries.filter((e) => text.includes(e.secret))

/** Prints planted/leaked per output; none of the gitleaks half may leak, at most 2% of the held-back one. */
function noLeak(
  command: string,
  half: 'gitleaks' | 'trufflehog',
  judged: Entry[],
  shown: number,
  outputs: Record<string, string>,
): void {
  const line = Object.entries(outputs).map(([where, text]) => `${where} ${found(judged, text).length}`)
  console.log(
    `${command} ${half}: planted ${judged.length} (${shown} reach an output unredacted); leaked: ${line.join(', ')}`,
  )
  const leaked = new Set(Object.values(outputs).flatMap((text) => found(judged, text).map((e) => e.source)))
  if (half === 'gitleaks') assert.deepEqual([...leaked], [])
  else assert.ok(leaked.size <= judged.length * 0.02, [...leaked].join(', '))
}

for (const half of ['gitleaks', 'trufflehog'] as const) {
  const judged = CORPUS[half].filter((e) => leftOut(e) === null)
  test(`why POD, ${half}: ${judged.length} shapes planted in Events, log lines and conditions; none in any output (held back: ≤ 2%)`, async () => {
    const raw = planted(judged)
    // The control: unredacted, the report prints the Events, the log lines and errors (the pod's own
    // condition message is read, not printed: it is in the facts, hence in a snapshot), so the
    // assertions below can fail.
    const control = renderWhy(judge(raw, 'live'), false) + jsonText(judge(raw, 'live'), 2)
    const shown = judged.filter((e, i) => (i % 4 === 2 ? JSON.stringify(raw) : control).includes(e.secret))
    assert.ok(
      shown.length >= judged.length * 0.95,
      `${shown.length} of ${judged.length} reach an unredacted output`,
    )
    // What a live run prints: the facts as collectWhy returns them.
    const live = redactWhyFacts(planted(judged))
    const report = judge(live, 'live')
    const path = join(dir, `${half}.json`)
    await saveWhySnapshot(path, live)
    const replay = judge(await loadWhySnapshot(path), 'snapshot')
    const outputs: Record<string, string> = {
      human: renderWhy(report, false),
      json: jsonText(report, 2),
      snapshot: readFileSync(path, 'utf8'),
      'human from the snapshot': renderWhy(replay, false),
    }
    noLeak('why POD', half, judged, shown.length, outputs)
  })
}

/** A NodeClaim whose instance never became a Node (a failed launch has no Node). */
const claimOnly = (...args: Parameters<typeof machine>) => ({ claim: machine(...args).claim })

/** One NodeClaim per entry: a launch that failed with the text, or an Event about the claim with it. */
function plantedNodes(entries: Entry[]): NodeFacts {
  const machines = entries.map((e, i) =>
    i % 2 === 0
      ? claimOnly(`ip-${i}`, {
          createdMinutesAgo: 10,
          conditions: [
            {
              type: 'Launched',
              status: 'False',
              reason: 'LaunchFailed',
              message: `launch failed: ${e.text}`,
              lastTransitionTime: ago(9),
            },
          ] as never,
        })
      : machine(`ip-${i}`),
  )
  const events = entries.flatMap((e, i) =>
    i % 2 === 1
      ? [
          event(
            'NodeClaim',
            (machines[i] as { claim: { metadata: { name: string } } }).claim.metadata.name,
            'DisruptionBlocked',
            `Cannot disrupt NodeClaim: ${e.text}`,
          ),
        ]
      : [],
  )
  return nodeFacts({ machines, events })
}

for (const half of ['gitleaks', 'trufflehog'] as const) {
  const judged = CORPUS[half].filter((e) => leftOut(e) === null)
  test(`why node, ${half}: ${judged.length} shapes planted in NodeClaim conditions and Events; none in any output (held back: ≤ 2%)`, async () => {
    const render = (f: NodeFacts, source: 'live' | 'snapshot') => {
      const report = judgeNodes(f, source, NOW)
      return { human: renderNodes(report, false, true), json: jsonText(report, 2) }
    }
    const raw = plantedNodes(judged)
    const control = Object.values(render(raw, 'live')).join('\n')
    const shown = judged.filter((e) => control.includes(e.secret))
    assert.ok(
      shown.length >= judged.length * 0.95,
      `${shown.length} of ${judged.length} reach an unredacted output`,
    )
    // What a live run judges: the facts as collectNodes returns them.
    const live: NodeFacts = {
      ...raw,
      nodes: redactConditionMessages(raw.nodes),
      nodeClaims: redactConditionMessages(raw.nodeClaims),
      events: redactEventMessages(raw.events),
    }
    const path = join(dir, `nodes-${half}.json`)
    await saveNodeSnapshot(path, live)
    const outputs: Record<string, string> = {
      ...render(live, 'live'),
      snapshot: readFileSync(path, 'utf8'),
      'human from the snapshot': render(
        await checkNodeFacts(JSON.parse(readFileSync(path, 'utf8')), path),
        'snapshot',
      ).human,
    }
    noLeak('why node', half, judged, shown.length, outputs)
  })
}
