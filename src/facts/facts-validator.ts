// The snapshot validator: ajv compiling schema/facts.schema.json. Compiling it takes ~430 ms, so the
// build (scripts/build.mjs) replaces this module with ajv's standalone code compiled at build time
// (~35 ms to load), with the same options; running from source (tests, bin/dev.js) compiles here.
// Loaded only by `--snapshot`: no other command pays for it.
import { readFileSync } from 'node:fs'
import { Ajv, type ValidateFunction } from 'ajv'

/**
 * Options of both compilations (here and in scripts/build.mjs): keep them equal. The schema's list of
 * free-text fields (src/facts/free-text.ts) is a keyword of its own, documentation to ajv.
 */
const AJV_OPTIONS = { strict: true, allErrors: false, keywords: ['x-karpctl-free-text'] }

const schema = JSON.parse(
  readFileSync(new URL('../../schema/facts.schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown>

// Named (ajv's standalone code exports the same name): the bundle requires this file as CommonJS, where a
// default export would arrive wrapped.
export const validate: ValidateFunction = new Ajv(AJV_OPTIONS).compile(schema)
export default validate
