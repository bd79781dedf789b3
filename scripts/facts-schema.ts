// The JSON Schema of a snapshot (`schema/facts.schema.json`), generated from the `Facts` type so the
// two cannot drift: run `npm run schema` after changing src/facts/types.ts (a unit test fails while
// the committed schema is stale). A snapshot is input: `doctor --snapshot` validates it against this
// schema before any check runs.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createGenerator } from 'ts-json-schema-generator'
import { FREE_TEXT } from '../src/facts/free-text.js'

const root = join(fileURLToPath(import.meta.url), '..', '..')
export const FACTS_SCHEMA_PATH = join(root, 'schema', 'facts.schema.json')

export function factsSchema(): Record<string, unknown> {
  const schema = createGenerator({
    path: join(root, 'src', 'facts', 'types.ts'),
    tsconfig: join(root, 'tsconfig.json'),
    type: 'Facts',
    expose: 'export',
    topRef: true,
    // The documentation lives in types.ts; the schema is for validation.
    jsDoc: 'none',
    // Kubernetes and AWS objects carry fields karpctl does not model: a snapshot may keep them.
    additionalProperties: true,
    skipTypeCheck: true,
  }).createSchema('Facts')
  return {
    $id: 'https://github.com/karpctl/karpctl/schema/facts.schema.json',
    title: 'karpctl snapshot (karpctl.facts/v1)',
    description:
      'What `karpctl doctor --save-snapshot` writes and `--snapshot` reads. Generated from src/facts/types.ts by `npm run schema`: do not edit.',
    ...(discriminate(schema) as object),
    // Which fields are free text, and what judges each (src/facts/free-text.ts): a field nothing
    // judges is not in a saved snapshot, a map of free text keeps only the keys a judgement reads.
    'x-karpctl-free-text': FREE_TEXT.map((f) => ({
      path: f.path,
      kept: f.judgedBy ? (f.keys ? 'the judged keys' : 'whole, redacted') : 'never',
      ...(f.judgedBy ? { judgedBy: f.judgedBy } : {}),
    })),
  }
}

type Schema = Record<string, unknown>

/**
 * A discriminated union (`Read<T>`: `{ok: true, value}` | `{ok: false, error}`) as if/then/else on its
 * constant: as an `anyOf`, a wrong `value` is reported for both cases and the validator cannot say
 * which was meant; on the constant, it says what is wrong in the case the snapshot chose.
 */
function discriminate(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(discriminate)
  if (!node || typeof node !== 'object') return node
  const out: Schema = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, discriminate(v)]))
  const branches = out.anyOf as Schema[] | undefined
  const tag = branches && discriminant(branches)
  if (!branches || !tag) return out
  delete out.anyOf
  const values = branches.map((b) => (b.properties as Record<string, Schema>)[tag]?.const)
  const chain = branches.reduceRight<Schema | undefined>(
    (otherwise, branch, i) =>
      otherwise === undefined
        ? branch
        : { if: { properties: { [tag]: { const: values[i] } } }, then: branch, else: otherwise },
    undefined,
  ) as Schema
  // The constant first (ajv applies allOf before if/then/else): `ok: "yes"` is named as such.
  return {
    ...out,
    type: 'object',
    allOf: [{ required: [tag], properties: { [tag]: { enum: values } } }],
    ...chain,
  }
}

/** The property every branch requires with a distinct constant, if there is one. */
function discriminant(branches: Schema[]): string | undefined {
  const first = branches[0]?.properties as Record<string, Schema> | undefined
  for (const key of Object.keys(first ?? {})) {
    const values = branches.map((b) => {
      const prop = (b.properties as Record<string, Schema> | undefined)?.[key]
      return b.type === 'object' && (b.required as string[] | undefined)?.includes(key)
        ? prop?.const
        : undefined
    })
    if (values.every((v) => v !== undefined) && new Set(values).size === values.length) return key
  }
  return undefined
}

export const factsSchemaText = (): string => `${JSON.stringify(factsSchema(), null, 2)}\n`

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(FACTS_SCHEMA_PATH, factsSchemaText())
  process.stdout.write(`wrote ${FACTS_SCHEMA_PATH}\n`)
}
