// The CLI bundle (dist/cli.js, CommonJS, loaded through V8's code cache by src/boot/main.ts): oclif and
// the commands in one file, so a run reads, parses and compiles one minified file instead of hundreds.
// Config too: tests load the bundle's own oclif, as patched by the build (scripts/build.mjs).
export { Config, execute } from '@oclif/core'

/**
 * The commands (oclif's explicit discovery target, dist/commands.js), evaluated when oclif first needs a
 * command class: `--version` and help read the manifest only. A require() the bundler turns into the
 * synchronous, once-only evaluation of the module; src/commands.ts is the same module under tsx.
 */
export function commands(): (typeof import('./commands.js'))['COMMANDS'] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./commands.js') as typeof import('./commands.js')).COMMANDS
}

/** oclif's help class (package.json `oclif.helpClass`, dist/help.js), from this bundle's one oclif. */
export function help(): typeof import('./help.js').default {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./help.js') as typeof import('./help.js')).default
}
