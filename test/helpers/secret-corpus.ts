// The secret scanners' rule sets as a corpus (test/fixtures/secrets/corpus.json, made by generate.py:
// a fake value drawn from each rule's regular expression, no real secret), in two halves reported
// apart: gitleaks, the half the redactor's rules were tuned on; trufflehog, held back.
import { readFileSync } from 'node:fs'

export interface Entry {
  source: string
  text: string
  secret: string
  entropy: number
}

export const CORPUS = JSON.parse(
  readFileSync(new URL('../fixtures/secrets/corpus.json', import.meta.url), 'utf8'),
) as { gitleaks: Entry[]; trufflehog: Entry[] }

const UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/

/**
 * Why an entry is not judged, or null: values in the exact shape of a UUID (Kubernetes uids and KMS
 * key ids are UUIDs, and karpctl judges them), values with fewer than 16 letters and digits (as short
 * as the names and hashes karpctl prints), all-digit values, and draws whose entropy is under 3 bits
 * (a rule's placeholder, such as `XxxxxXXxXx`).
 */
export function leftOut(e: Entry): string | null {
  if (e.entropy < 3) return 'placeholder'
  if (UUID.test(e.secret)) return 'uuid'
  if (/^\d+$/.test(e.secret)) return 'digits'
  if (e.secret.replace(/[^A-Za-z0-9]/g, '').length < 16) return 'short'
  return null
}
