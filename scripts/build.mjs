// Bundles the CLI (src/cli.ts: @oclif/core's execute) and the commands (src/commands.ts) into one
// module graph with code splitting: one minified copy of oclif instead of hundreds of files, and each
// command's heavy dependencies (AWS SDK clients, YAML, HCL) in chunks loaded only when it runs.
import { build } from 'esbuild'
import { rmSync } from 'node:fs'

rmSync('dist', { recursive: true, force: true })
await build({
  entryPoints: { cli: 'src/cli.ts', commands: 'src/commands.ts' },
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
})
