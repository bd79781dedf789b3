import { readFile, writeFile } from 'node:fs/promises'
import { InputError } from '../errors.js'
import { redact } from './redact.js'
import type { Facts } from './types.js'

const SCHEMA = 'karpctl.facts/v1'
const SECTIONS = ['meta', 'eks', 'iam', 'ec2', 'sqs', 'events', 'kube', 'local'] as const

export async function saveSnapshot(path: string, facts: Facts): Promise<void> {
  await writeFile(path, `${JSON.stringify(redact(facts), null, 2)}\n`, { mode: 0o600 })
}

export async function loadSnapshot(path: string): Promise<Facts> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new InputError(
      code === 'ENOENT'
        ? `snapshot ${path} does not exist: check the path`
        : `cannot read snapshot ${path}: ${code ?? String(err)}`,
      'SNAPSHOT_UNREADABLE',
    )
  }
  return parseSnapshot(text, path)
}

export function parseSnapshot(text: string, path: string): Facts {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (err) {
    throw new InputError(
      `snapshot ${path} is not valid JSON (${(err as Error).message}): save a new one with \`karpctl doctor --save-snapshot\``,
      'SNAPSHOT_CORRUPT',
    )
  }
  const facts = data as Partial<Facts> | null
  if (!facts || typeof facts !== 'object' || facts.schema !== SCHEMA) {
    throw new InputError(
      `${path} is not a karpctl snapshot (expected "schema": "${SCHEMA}"): save one with \`karpctl doctor --save-snapshot\``,
      'SNAPSHOT_SCHEMA',
    )
  }
  const missing = SECTIONS.filter((s) => !facts[s] || typeof facts[s] !== 'object')
  if (missing.length > 0) {
    throw new InputError(
      `snapshot ${path} is incomplete (missing ${missing.join(', ')}): save a new one`,
      'SNAPSHOT_CORRUPT',
    )
  }
  return facts as Facts
}
