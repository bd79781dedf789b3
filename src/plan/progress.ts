// Progress of an apply: one plain line per finished step (pipes, CI, NO_COLOR), coloured on a terminal.
import type { StepEvent } from './apply.js'
import { printable } from './render.js'
import { style } from '../report/style.js'
import { visible } from '../report/terminal.js'

const verb = { create: 'created', update: 'updated', delete: 'deleted', unchanged: 'unchanged' } as const

export function progressLine(raw: StepEvent, color: boolean): string | null {
  // The resource's name and the error message come from AWS or the cluster.
  const e = { ...raw, step: printable(raw.step), message: raw.message && visible(raw.message) }
  const s = style(color)
  const r = e.step.resource
  const what = `${r.kind} ${r.name}`
  const secs = e.ms !== undefined ? s.dim(` (${(e.ms / 1000).toFixed(1)} s)`) : ''
  switch (e.status) {
    case 'start':
      return null
    case 'done':
      return `${s.green('✔')} ${verb[e.step.verdict.action]} ${what}${secs}`
    case 'retry':
      return `${s.yellow('↻')} ${what}: ${e.waiting ? `waiting for ${e.waiting}` : e.message} — attempt ${(e.attempt ?? 1) + 1}${e.attempts ? ` of ${e.attempts}` : ''}${e.delayMs !== undefined ? ` in ${(e.delayMs / 1000).toFixed(1)} s` : ''}`
    case 'failed':
      return `${s.red('✖')} ${what}: ${e.message}`
    case 'skipped':
      return `${s.dim('–')} ${what}: not applied, ${e.message}`
  }
}
