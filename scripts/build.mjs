// Bundles src/ into dist/ with code splitting, so each command's heavy dependencies
// (AWS SDK clients, YAML, HCL) load only when that command runs: CLI start-up stays close to bare node.
import { build } from 'esbuild'
import { rmSync } from 'node:fs'

rmSync('dist', { recursive: true, force: true })
await build({
  entryPoints: { commands: 'src/commands.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
})
