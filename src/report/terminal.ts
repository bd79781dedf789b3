// Text that came from the cluster, AWS or a file (names, messages, notes, caveats, commands) may
// carry escape sequences: a window title (ESC ] 0 ; … BEL), a screen clear (ESC [ 2 J), a hyperlink
// that says one thing and opens another (OSC 8), CSI through U+009B, a carriage return or backspaces
// that overwrite what came before, bidirectional overrides that reorder it. Printed as is, the
// terminal obeys them. Each sink makes them visible instead (`\u001b`), in one place:
//  - the text renderers (human, markdown, junit, the plan, progress lines) take their input through
//    `forTerminal` before they add karpctl's own colours;
//  - everything a command prints goes through `visible` (BaseCommand.log, .progress), which keeps
//    only karpctl's own colour codes;
//  - JSON (and SARIF) is `jsonText`: valid JSON, with the controls JSON.stringify leaves raw escaped.
import { fstatSync, statSync } from 'node:fs'
import type { CheckResult } from '../checks/types.js'
import { escapeControl, type KarpctlError, oneLine } from '../errors.js'
import type { Facts } from '../facts/types.js'

// C0 but tab and newline, DEL, C1 (U+009B is a one-character CSI), and the bidirectional controls.
// eslint-disable-next-line no-control-regex
const FOREIGN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g
// The same and the line breaks: what text from outside is shown with, so it cannot start a line of
// its own (`\n✔ all checks passed` would read as karpctl's verdict).
// eslint-disable-next-line no-control-regex
const FOREIGN_OR_BREAK = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g

/** karpctl's own colours (src/report/style.ts, src/plan/render.ts): SGR codes, nothing else. */
// eslint-disable-next-line no-control-regex
const OWN_COLOUR = /\u001b\[(?:0|1|2|22|31|32|33|36|39)m/y

/** The text on one line, every control character and line break shown (`\n`, `\r`, `\uXXXX`), never interpreted. */
export function visible(text: string): string {
  return text.replace(FOREIGN_OR_BREAK, escapeControl)
}

/** Text that is several lines by design (a fix snippet karpctl wrote, its values quoted): each line `visible`. */
export function visibleLines(text: string): string {
  return text.split('\n').map(visible).join('\n')
}

/** An error's stack for --debug: the message (a server may have written it) on one line, each frame visible. */
export function debugStack(err: Error, stack: string): string {
  const head = `${err.name}: ${err.message}`
  const rest = stack.startsWith(head) ? stack.slice(head.length) : `\n${stack}`
  return `${visible(head)}${visibleLines(rest)}`
}

/**
 * What a command prints: control characters made visible, except karpctl's own colour codes, which a
 * renderer added after `forTerminal` had neutralised its input.
 */
export function terminalLine(text: string): string {
  return text.replace(FOREIGN, (c, at: number) => {
    OWN_COLOUR.lastIndex = at
    return c === '\u001b' && OWN_COLOUR.test(text) ? c : escapeControl(c)
  })
}

/**
 * A copy of plain data (check results, facts.meta) with every string and key `visible`. A loop with
 * its own stack, not recursion: evidence can hold a deeply nested value from a live cluster.
 */
export function forTerminal<T>(value: T): T {
  const root: { v?: unknown } = {}
  const work: { src: unknown; put: (v: unknown) => void }[] = [{ src: value, put: (v) => (root.v = v) }]
  while (work.length > 0) {
    const { src, put } = work.pop() as (typeof work)[number]
    if (typeof src === 'string') put(visible(src))
    else if (Array.isArray(src)) {
      const copy: unknown[] = new Array(src.length)
      put(copy)
      src.forEach((x, i) => work.push({ src: x, put: (v) => (copy[i] = v) }))
    } else if (src && typeof src === 'object' && Object.getPrototypeOf(src) === Object.prototype) {
      const copy: Record<string, unknown> = {}
      put(copy)
      // Keys made in their order now (the work is a stack, filled last first): documents read as written.
      for (const k of Object.keys(src)) copy[visible(k)] = undefined
      for (const [k, x] of Object.entries(src)) work.push({ src: x, put: (v) => (copy[visible(k)] = v) })
    } else put(src)
  }
  return root.v as T
}

// What JSON.stringify leaves raw: DEL, C1 and the bidirectional controls (valid JSON, but a terminal
// showing the JSON would obey them). They only occur inside strings, where `\uXXXX` means the same.
const JSON_RAW = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g

/** JSON.stringify, with no control character left raw in the text. */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_RAW, escapeControl)
}

/** A report renderer's input, made visible: the results and the facts' meta (all a report prints of the facts). */
export function safeInput(results: CheckResult[], facts: Facts | null) {
  const safe = forTerminal(results)
  // A snippet is the one field printed over several lines: its own line breaks are kept.
  results.forEach((r, i) =>
    r.findings.forEach((f, j) => {
      const fix = safe[i]?.findings[j]?.fix
      if (f.fix?.snippet && fix?.snippet) fix.snippet.text = visibleLines(f.fix.snippet.text)
    }),
  )
  return { results: safe, meta: facts ? forTerminal(facts.meta) : null }
}

/** An error as karpctl prints it: one line on stderr, or with --json `{"error": {code, message}}` on stdout. */
export function writeError(err: KarpctlError, json: boolean): void {
  const message = oneLine(err.message)
  if (json) process.stdout.write(`${jsonText({ error: { code: err.code, message } }, 2)}\n`)
  // A JSON error no one can read (stdout closed, which Node reopens on /dev/null, or sent there) would
  // leave exit 2 without a word: the line goes to stderr too.
  if (!json || stdoutDiscarded()) process.stderr.write(`Error: ${message}\n`)
}

/** Whether stdout is /dev/null: where Node puts a stdout that was closed (`karpctl … >&-`). */
export function stdoutDiscarded(): boolean {
  try {
    const out = fstatSync(1)
    return out.isCharacterDevice() && out.rdev === statSync('/dev/null').rdev
  } catch {
    return false
  }
}
