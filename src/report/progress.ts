// Progress of an apply: one plain line per finished step (pipes, CI, NO_COLOR), coloured on a terminal.
import type { StepEvent } from '../plan/apply.js'
import { printable } from '../plan/render.js'
import { style } from './style.js'
import { visible } from './terminal.js'

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
      return `${s.yellow('↻')} ${what}: ${e.message} — retrying (attempt ${(e.attempt ?? 1) + 1})`
    case 'failed':
      return `${s.red('✖')} ${what}: ${e.message}`
    case 'skipped':
      return `${s.dim('–')} ${what}: not applied, ${e.message}`
  }
}
