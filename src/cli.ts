// The CLI entry, bundled with @oclif/core and the commands into one module graph: one copy of oclif,
// parsed from a few minified files instead of hundreds, so start-up stays close to bare node.
export { execute } from '@oclif/core'
