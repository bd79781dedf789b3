// oclif's own "command not found" (`karpctl doctr`, `karpctl tenant ad`): one line with the command
// meant, when one is close, and a pointer to the help; `{"error": …}` with --json; exit 2 — as every
// other usage error of karpctl, instead of oclif's ` ›   Error: command doctr not found` and exit 127.
import type { Hook } from '@oclif/core'
import { ExitCode, KarpctlError, quote } from '../errors.js'
import { writeError } from '../report/terminal.js'

/** Edit distance (insert, delete, substitute, swap two neighbours). */
export function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[]
      const up = d[i - 1] as number[]
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row[j] = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1)
    }
  return (d[a.length] as number[])[b.length] as number
}

/** The command or topic closest to what was typed, if it is close enough to be a typo. */
export function closest(typed: string, known: string[]): string | undefined {
  let best: { id: string; d: number } | undefined
  for (const id of known) {
    const d = distance(typed, id)
    if (!best || d < best.d) best = { id, d }
  }
  return best && best.d <= Math.max(2, Math.floor(typed.length / 3)) ? best.id : undefined
}

/** The one line for an unknown command, given the command ids and topics karpctl has. */
export function notFoundMessage(id: string, commands: string[], topics: string[]): string {
  const spaced = (s: string) => s.replace(/:/g, ' ')
  // oclif joins every word before the first flag into the id (`tenant:ad:acme`): the longest prefix
  // that is a topic, then the word that is not one of its commands; what follows are arguments.
  const parts = id.split(':')
  let depth = parts.length - 1
  while (depth > 0 && !topics.includes(parts.slice(0, depth).join(':'))) depth--
  const topic = parts.slice(0, depth).join(':')
  const typed = parts.slice(0, depth + 1).join(':')
  const word = parts[depth] as string
  const meant = closest(typed, [...commands, ...topics])
  const help = topic ? `karpctl ${spaced(topic)} --help` : 'karpctl --help'
  const what = topic
    ? `karpctl ${spaced(topic)} has no command ${quote(word)}`
    : `karpctl has no command ${quote(word)}`
  return `${what}${meant ? `: did you mean \`karpctl ${spaced(meant)}\`?` : ''} (see \`${help}\`)`
}

const hook: Hook<'command_not_found'> = async function (opts) {
  const commands = opts.config.commandIDs
  const topics = opts.config.topics.map((t) => t.name)
  // `karpctl --nope`: a flag before any command reaches oclif as the command's name.
  const err = opts.id.startsWith('-')
    ? new KarpctlError(`Nonexistent flag: ${opts.id} (see \`karpctl --help\`)`, 'USAGE')
    : new KarpctlError(notFoundMessage(opts.id, commands, topics), 'COMMAND_NOT_FOUND')
  writeError(err, (opts.argv ?? []).includes('--json'))
  process.exitCode = ExitCode.cannotRun
}

export default hook
