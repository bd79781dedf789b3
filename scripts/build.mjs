// Bundles the CLI (src/cli.ts: @oclif/core's execute) and the commands (src/commands.ts) into one
// module graph with code splitting: one minified copy of oclif instead of hundreds of files, and each
// command's heavy dependencies (AWS SDK clients, YAML, HCL) in chunks loaded only when it runs.
import { build } from 'esbuild'
import { readFileSync, rmSync } from 'node:fs'
import { Ajv } from 'ajv'
import standaloneCode from 'ajv/dist/standalone/index.js'

/**
 * src/facts/facts-validator.ts compiles the snapshot schema when it loads (~430 ms); the bundle gets
 * ajv's standalone code for the same schema and options instead (~35 ms to load, no compiler).
 */
const factsValidator = {
  name: 'facts-validator',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]facts[\\/]facts-validator\.ts$/ }, () => {
      const schema = JSON.parse(readFileSync('schema/facts.schema.json', 'utf8'))
      // The options of src/facts/facts-validator.ts, plus ESM standalone output.
      const ajv = new Ajv({ strict: true, allErrors: false, code: { source: true, esm: true } })
      return { contents: standaloneCode(ajv, ajv.compile(schema)), loader: 'js', resolveDir: 'src/facts' }
    })
  },
}

rmSync('dist', { recursive: true, force: true })
await build({
  entryPoints: {
    cli: 'src/cli.ts',
    commands: 'src/commands.ts',
    'hooks/not-found': 'src/hooks/not-found.ts',
  },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  minify: process.env.KARPCTL_NO_MINIFY !== '1',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Loaded lazily by the commands that need them; the SDK resolves its own files at run time.
  external: ['@aws-sdk/*', '@inquirer/*', 'yaml', '@cdktf/hcl2json', 'typescript', 'ts-node'],
  chunkNames: 'chunks/[name]-[hash]',
  // oclif is CommonJS: give the ESM bundle a `require` for its dynamic requires.
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  sourcemap: 'linked',
  logLevel: 'warning',
  plugins: [factsValidator],
})
