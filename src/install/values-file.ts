// A Helm values file given to install (`--values`, or typed in the wizard): read, parsed, checked to be a
// map. Its own module so the wizard can check a typed path without importing the install use case.
import { parse } from 'yaml'
import { InputError } from '../errors.js'
import { readTextFile } from '../lint/values.js'

/**
 * A values file the user adds on top of karpctl's: a regular UTF-8 file of bounded size (a FIFO would
 * block the run, a 50 MB file is not values) holding a YAML map, or a clear error naming the file.
 */
export async function loadExtraValues(file: string | undefined): Promise<Record<string, unknown>> {
  if (!file) return {}
  return valuesOf(await readTextFile(file, 'values file', 'VALUES_FILE'), file)
}

/** For the wizard: the typed path is checked as it is typed, not after the last question. */
export async function valuesFileProblem(file: string): Promise<true | string> {
  if (!file.trim()) return true
  try {
    await loadExtraValues(file)
    return true
  } catch (err) {
    if (err instanceof InputError) return err.message
    throw err
  }
}

function valuesOf(text: string, file: string): Record<string, unknown> {
  let v: unknown
  try {
    v = parse(text, { version: '1.1', maxAliasCount: 100 })
  } catch (err) {
    throw new InputError(
      `values file ${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
      'INVALID_VALUES',
    )
  }
  if (v === null || v === undefined) return {}
  if (typeof v !== 'object' || Array.isArray(v))
    throw new InputError(
      `values file ${file} must be a YAML map of Helm values, not a ${Array.isArray(v) ? 'list' : typeof v}`,
      'INVALID_VALUES',
    )
  return v as Record<string, unknown>
}
