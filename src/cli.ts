// The CLI bundle (dist/cli.js, CommonJS, loaded through V8's code cache by src/boot/main.ts): oclif and
// the commands in one file, so a run reads, parses and compiles one minified file instead of hundreds.
export { execute } from '@oclif/core'
export { COMMANDS } from './commands.js'
