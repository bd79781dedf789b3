// Progress of an apply: one plain line per finished step (pipes, CI, NO_COLOR), coloured on a terminal.
import type { StepEvent } from '../plan/apply.js'
import { style } from './style.js'

const verb = { create: 'created', update: 'updated', delete: 'deleted', unchanged: 'unchanged' } as const

export function progressLine(e: StepEvent, color: boolean): string | null {
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
