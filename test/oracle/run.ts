// `npm run test:oracle` (via scripts/oracle.sh, which builds the oracle): `karpctl why` against
// Karpenter's own scheduler on generated cases. For every case, pod and NodePool, `why`'s verdict (the
// use case `why --snapshot FILE` runs: load the snapshot, judge) is compared with the oracle's:
//   false fit — why ✔, Karpenter launches nothing (or ✔ where the pod uses a field why does not judge)
//   false ✖   — why ✖, Karpenter launches a NodeClaim
//   ?         — why could not tell (allowed: never a ✔)
// Every printed `kubectl patch` fix of a ✖ is applied to the case (chained while `why` prints a next
// fix) and the oracle asked again: it must then launch. Exit 1 on any disagreement (a ? included, unless
// Karpenter itself launches in some scheduling loops only) or failed fix: what CI gates on.
//
//   KARPCTL_ORACLE_CASES=N (2000)  KARPCTL_ORACLE_SEED=S (1)  KARPCTL_ORACLE_BIN=path (set by oracle.sh)
//   KARPCTL_ORACLE_VERBOSE=1 prints every ? too
//   KARPCTL_ORACLE_GATE=verdicts fails on disagreements only, not on fix chains (while debugging one)
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { judge, type PoolVerdict, type WhyReport } from '../../src/why/judge.js'
import type { WhyFacts } from '../../src/why/types.js'
import { why } from '../../src/why/why.js'
import { catalogue, generate } from './generate.js'
import { applyCreateTags, applyPatch, parseCreateTags, parsePatch, type KubectlPatch } from './patch.js'
import { unjudgedFields } from './unjudged.js'

interface OracleVerdict {
  nodePool: string
  fits: boolean
  reason?: string
  /** Karpenter launches in some scheduling loops only (ties among topology domains): why must say ?. */
  flaky?: boolean
}
interface OracleAnswer {
  karpenter: string
  pods: { namespace: string; name: string; nodePools: OracleVerdict[] }[]
}

const bin = process.env.KARPCTL_ORACLE_BIN
if (!bin)
  throw new Error('KARPCTL_ORACLE_BIN is not set: run `npm run test:oracle` (scripts/oracle.sh builds it)')
const cases = Number(process.env.KARPCTL_ORACLE_CASES ?? 2000)
const seed0 = Number(process.env.KARPCTL_ORACLE_SEED ?? 1)
const verbose = process.env.KARPCTL_ORACLE_VERBOSE === '1'

/** Asks the oracle about many snapshots in few processes (its start-up is the cost). */
function ask(files: string[]): Map<string, OracleAnswer> {
  const out = new Map<string, OracleAnswer>()
  for (let i = 0; i < files.length; i += 400) {
    const text = execFileSync(bin as string, files.slice(i, i + 400), {
      maxBuffer: 1 << 30,
      encoding: 'utf8',
    })
    for (const line of text.split('\n').filter(Boolean)) {
      const l = JSON.parse(line) as { file: string; answer?: OracleAnswer; error?: string }
      if (!l.answer) throw new Error(`oracle could not judge ${l.file}: ${l.error}`)
      out.set(l.file, l.answer)
    }
  }
  return out
}

interface ResolvedClass {
  name: string
  status: {
    subnets?: { id: string; zone: string; zoneID?: string }[]
    conditions?: { type: string; status: string; reason?: string; message?: string }[]
  }
}

/** Karpenter's subnet reconciler on each snapshot's EC2NodeClasses (oracle resolve), per file. */
function resolve(files: string[]): Map<string, ResolvedClass[]> {
  const out = new Map<string, ResolvedClass[]>()
  for (let i = 0; i < files.length; i += 400) {
    const text = execFileSync(bin as string, ['resolve', ...files.slice(i, i + 400)], {
      maxBuffer: 1 << 30,
      encoding: 'utf8',
    })
    for (const line of text.split('\n').filter(Boolean)) {
      const l = JSON.parse(line) as { file: string; nodeClasses?: ResolvedClass[]; error?: string }
      if (l.error) throw new Error(`oracle could not resolve ${l.file}: ${l.error}`)
      out.set(l.file, l.nodeClasses ?? [])
    }
  }
  return out
}

/** Writes Karpenter's resolution of the classes' subnets into the facts (status.subnets, conditions). */
function resolveClasses(facts: WhyFacts): void {
  const file = join(dir, 'resolve.json')
  writeFileSync(file, JSON.stringify(facts))
  const resolved = resolve([file]).get(file) ?? []
  for (const nc of facts.kube.nodeClasses.ok ? facts.kube.nodeClasses.value : []) {
    const r = resolved.find((x) => x.name === nc.metadata.name)
    if (!r) continue
    const rest = { ...nc.status }
    delete rest.subnets
    nc.status = {
      ...rest,
      ...(r.status.subnets?.length
        ? { subnets: r.status.subnets.map((x) => ({ id: x.id, zone: x.zone })) }
        : {}),
      conditions: (r.status.conditions ?? []).map(({ type, status, reason, message }) => ({
        type,
        status,
        ...(reason ? { reason } : {}),
        ...(message ? { message } : {}),
      })),
    }
  }
}

/** why's verdict of one pod against one NodePool. */
function verdictOf(report: WhyReport, pod: string, pool: string): PoolVerdict | undefined {
  return report.groups.find((g) => g.pods.includes(pod))?.nodePools.find((v) => v.nodePool === pool)
}

const dir = mkdtempSync(join(tmpdir(), 'karpctl-oracle-'))
const t0 = Date.now()
try {
  const cat = catalogue(JSON.parse(execFileSync(bin, ['catalog'], { encoding: 'utf8' })))
  const files = new Map<number, { file: string; facts: WhyFacts }>()
  for (let s = seed0; s < seed0 + cases; s++) {
    const facts = generate(s, cat)
    const file = join(dir, `case-${s}.json`)
    writeFileSync(file, JSON.stringify(facts))
    files.set(s, { file, facts })
  }
  // The generator writes each class's status itself; it must be what Karpenter's subnet reconciler
  // writes from the case's VPC subnets, or a replayed subnet fix would be judged on another cluster.
  for (const [file, classes] of resolve([...files.values()].map((f) => f.file))) {
    const facts = [...files.values()].find((f) => f.file === file)?.facts as WhyFacts
    for (const r of classes) {
      const nc = (facts.kube.nodeClasses.ok ? facts.kube.nodeClasses.value : []).find(
        (x) => x.metadata.name === r.name,
      )
      const ids = (s?: { id: string }[]) =>
        (s ?? [])
          .map((x) => x.id)
          .sort()
          .join(' ')
      const ready = (c?: { type: string; status: string }[]) => c?.find((x) => x.type === 'Ready')?.status
      if (
        ids(nc?.status?.subnets) !== ids(r.status.subnets) ||
        ready(nc?.status?.conditions) !== ready(r.status.conditions)
      )
        throw new Error(
          `${file}: EC2NodeClass ${r.name} is generated with subnets [${ids(nc?.status?.subnets)}] Ready=${ready(nc?.status?.conditions)}, Karpenter resolves [${ids(r.status.subnets)}] Ready=${ready(r.status.conditions)}`,
        )
    }
  }
  const tGen = Date.now()
  const answers = ask([...files.values()].map((f) => f.file))
  const tOracle = Date.now()

  let verdicts = 0
  let fits = 0
  const counts = { falseFit: 0, falseX: 0, unknown: 0 }
  const byClass = new Map<string, number>()
  const replays: { seed: number; pod: string; pool: string; file: string; fixes: string[] }[] = []
  let notReplayable = 0
  let loopsUnseen = 0
  const unreplayable = new Map<string, number>()
  for (const [seed, { file, facts }] of files) {
    const { report } = await why({ snapshot: file })
    const answer = answers.get(file) as OracleAnswer
    for (const p of answer.pods) {
      const pod = (facts.pods.ok ? facts.pods.value : []).find((x) => x.metadata.name === p.name)
      for (const o of p.nodePools) {
        const unjudged = pod ? unjudgedFields(pod, facts, o.nodePool) : []
        verdicts++
        if (o.fits) fits++
        const v = verdictOf(report, p.name, o.nodePool)
        const whyText = v ? `${v.status}${v.rule ? ` (${v.rule})` : ''}: ${v.message}` : 'no verdict'
        const where = `seed ${seed} pod ${p.name} NodePool ${o.nodePool}`
        const karp = o.fits ? 'Karpenter launches a NodeClaim' : `Karpenter: ${o.reason}`
        const note = (kind: string, cls: string) => {
          byClass.set(`${kind} ${cls}`, (byClass.get(`${kind} ${cls}`) ?? 0) + 1)
          if (kind !== '?' || verbose) console.log(`${kind}: ${where}\n  why ${whyText}\n  ${karp}`)
        }
        if (v?.status === 'fits' && (!o.fits || o.flaky)) {
          counts.falseFit++
          note('false fit', 'fits')
        } else if (v?.status === 'fits' && unjudged.length) {
          counts.falseFit++
          note('false fit', `on a field why does not judge: ${unjudged.join(', ')}`)
        } else if (v?.status === 'ruled-out' && (o.fits || o.flaky)) {
          counts.falseX++
          note('false ✖', v.rule ?? '')
        } else if (v?.status === 'unknown' && o.flaky) {
          // Karpenter launches in some scheduling loops only: `?` is the one right answer.
        } else if (
          v?.status === 'unknown' &&
          o.fits &&
          v.message.endsWith('launches in some scheduling loops only')
        ) {
          // why names the zone Karpenter may pick where the pod does not fit, and the oracle's 32 loops
          // did not happen on it (Karpenter prefers zones its NodeClaim may launch in: a bad pick is rare,
          // seed 1976 failed once in 8 loops, then 0 in 32). Counted apart, not a disagreement.
          loopsUnseen++
          if (verbose)
            console.log(
              `? (loop-dependent, not seen by the oracle): seed ${seed} pod ${p.name} NodePool ${o.nodePool}`,
            )
        } else if (v?.status !== 'fits' && v?.status !== 'ruled-out') {
          counts.unknown++
          note('?', v?.rule ?? 'none')
        }
        if (v?.status === 'ruled-out' && !o.fits) {
          const chained = replayFixes(facts, p.name, o.nodePool, v)
          if ('unreplayable' in chained) {
            notReplayable++
            unreplayable.set(chained.unreplayable, (unreplayable.get(chained.unreplayable) ?? 0) + 1)
          } else {
            const replayFile = join(dir, `replay-${seed}-${replays.length}.json`)
            writeFileSync(replayFile, JSON.stringify(chained.facts))
            replays.push({ seed, pod: p.name, pool: o.nodePool, file: replayFile, fixes: chained.fixes })
          }
        }
      }
    }
  }
  const tWhy = Date.now()

  // The fixes: the oracle must launch a NodeClaim for the pod from the NodePool once they are applied.
  const replayAnswers = ask(replays.map((r) => r.file))
  let fixFailures = 0
  let flakyFixes = 0
  for (const r of replays) {
    const o = replayAnswers
      .get(r.file)
      ?.pods.find((p) => p.name === r.pod)
      ?.nodePools.find((v) => v.nodePool === r.pool)
    if (o?.fits) continue
    // Karpenter launches in some scheduling loops only (a random domain pick): counted, not gated.
    if (o?.flaky) {
      flakyFixes++
      console.log(`fix fits in some scheduling loops only: seed ${r.seed} pod ${r.pod} NodePool ${r.pool}`)
      continue
    }
    fixFailures++
    console.log(
      `fix does not fit: seed ${r.seed} pod ${r.pod} NodePool ${r.pool}\n  applied ${r.fixes.join(' && ')}\n  Karpenter: ${o?.reason}`,
    )
  }
  const classes = [...byClass].sort((a, b) => b[1] - a[1])
  if (classes.length) console.log(`by class:\n${classes.map(([c, n]) => `  ${n} ${c}`).join('\n')}`)
  console.log(
    `${verdicts} verdicts (${fits} where Karpenter launches); generated in ${tGen - t0} ms, oracle ${tOracle - tGen} ms, why ${tWhy - tOracle} ms`,
  )
  console.log(
    `fixes: ${replays.length} replayed on the oracle, ${fixFailures} did not make the pod fit, ${flakyFixes} fit in some scheduling loops only, ${notReplayable} not replayable${notReplayable ? ':' : ''}`,
  )
  for (const [why, n] of [...unreplayable].sort((a, b) => b[1] - a[1])) console.log(`  ${n} ${why}`)
  if (loopsUnseen)
    console.log(
      `${loopsUnseen} ? where why names a zone pick that fails and the oracle's loops all launched (not gated)`,
    )
  const d = counts.falseFit + counts.falseX + counts.unknown
  console.log(
    `oracle: ${cases} cases, ${d} disagreements (${counts.falseFit} false fits, ${counts.falseX} false ✖, ${counts.unknown} ?)`,
  )
  // Any disagreement — a false fit, a false ✖ or a ? where Karpenter has an answer — and any fix chain
  // that did not make the pod fit fails the run (CI); KARPCTL_ORACLE_GATE=verdicts skips the latter.
  const verdictsOnly = process.env.KARPCTL_ORACLE_GATE === 'verdicts'
  process.exitCode = d || (!verdictsOnly && fixFailures) ? 1 : 0
} finally {
  rmSync(dir, { recursive: true, force: true })
}

/** A command that changes nothing: kubectl get / describe / logs, an aws describe-* or get-* call. */
function readsOnly(command: string): boolean {
  return command
    .split(/\s*(?:&&|\|)\s*/)
    .every(
      (part) =>
        /^kubectl\s+(?:-n\s+\S+\s+)?(?:get|describe|logs)\b/.test(part) ||
        /^aws\s+\S+\s+(?:describe|get|list)-/.test(part) ||
        /^(?:grep|jq|head)\b/.test(part),
    )
}

/**
 * Applies the verdict's fix and, while `why` then rules the NodePool out with another fix, that one too
 * (a fix lifts the first rule that ruled the NodePool out; another may follow). Returns the patched facts
 * when `why` ends on ✔, else why the chain cannot be replayed (a fix in words, a command that is not a
 * `kubectl patch`, or a chain that ends on ✖ or ?).
 */
function replayFixes(
  original: WhyFacts,
  pod: string,
  pool: string,
  first: PoolVerdict,
): { facts: WhyFacts; fixes: string[] } | { unreplayable: string } {
  const facts = structuredClone(original)
  const fixes: string[] = []
  let v: PoolVerdict | undefined = first
  for (let round = 0; round < 10 && v?.status === 'ruled-out'; round++) {
    const commands = v.fix?.commands ?? []
    if (!commands.length)
      return {
        unreplayable: `${v.rule}: ${v.fix ? 'a fix in words, no command' : 'no fix'}${round ? ' (after a fix)' : ''}`,
      }
    // Commands that only read (kubectl get / logs, aws … describe-*) diagnose a cause outside the
    // objects a snapshot holds (subnets, the class's conditions): doctor's to fix, not a patch to replay.
    if (commands.every(readsOnly))
      return {
        unreplayable: `${v.rule}: a diagnosis in AWS (${commands.length} read-only commands)${round ? ' (after a fix)' : ''}`,
      }
    let inAws = false
    for (const c of commands) {
      const tags = parseCreateTags(c)
      const p = tags ? undefined : parsePatch(c)
      if (!tags && !p)
        return {
          unreplayable: `${v.rule}: \`${c.split(' ').slice(0, 3).join(' ')}…\` is not a kubectl patch`,
        }
      if (tags ? !applyCreateTags(facts, tags) : !applyPatch(facts, p as KubectlPatch))
        return {
          unreplayable: `${v.rule}: the ${tags ? 'tags name a subnet the VPC does not hold' : 'patch does not apply'}`,
        }
      inAws ||= !!tags || p?.kind.toLowerCase() === 'ec2nodeclass'
      fixes.push(c)
    }
    // A subnet tagged or a class's selector changed: the class's status is what Karpenter's own subnet
    // reconciler then writes (the oracle's `resolve`), not what the fix hoped for.
    if (inAws) resolveClasses(facts)
    // judge() is what `why --snapshot` runs once the snapshot is loaded; these facts are in memory.
    v = verdictOf(judge(facts, 'snapshot'), pod, pool)
  }
  if (v?.status === 'fits') return { facts, fixes }
  return {
    unreplayable: `why ends on ${v?.status ?? 'no verdict'}${v?.rule ? ` (${v.rule})` : ''} after the fixes`,
  }
}
