// Bundles the CLI into CommonJS files that src/boot/code-cache.ts loads through V8's code cache (Node 20
// cannot give an ES module cached data): dist/cli.js holds oclif, every command and karpctl's own code
// (lazily imported modules stay in it, evaluated only when first imported); dist/commands.js is the
// module oclif's explicit command discovery requires (package.json `oclif.commands`), the same module;
// dist/boot.js is what bin/run.js runs. dist/package.json makes these .js files CommonJS.
//
// The AWS SDK clients and @kubernetes/client-node are bundled too, each family into a bundle of its own
// under dist/vendor/ (one copy of the SDK's shared core for all six clients), loaded through the same
// cache on the first import of one of them: resolving and compiling hundreds of files from node_modules
// cost a live run more than its network. Inside a bundle each package is evaluated on first use only.
import { build } from 'esbuild'
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { Ajv } from 'ajv'
import standaloneCode from 'ajv/dist/standalone/index.js'

const pkg = JSON.parse(readFileSync('package.json', 'utf8'))
const common = {
  bundle: true,
  minify: process.env.KARPCTL_NO_MINIFY !== '1',
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // The licences of bundled packages, in one file beside each bundle.
  legalComments: 'linked',
  logLevel: 'warning',
  // import() becomes require(): a script compiled with cached data has no dynamic import callback in
  // Node 20 (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), and every package left in node_modules has a
  // CommonJS entry.
  supported: { 'dynamic-import': false },
  metafile: true,
}

/** Every node_modules file each bundle took in: the packages THIRD-PARTY-NOTICES.txt credits. */
const bundledInputs = new Set()
const built = async (options) => {
  const result = await build(options)
  for (const input of Object.keys(result.metafile.inputs)) bundledInputs.add(input)
  return result
}

/** The SDK client class of each service, as src/context/aws.ts names them (its `clientClass`). */
const AWS_CLIENT_CLASS = Object.fromEntries(
  [
    .../const clientClass[^{]*\{([^}]*)\}/
      .exec(readFileSync('src/context/aws.ts', 'utf8'))[1]
      .matchAll(/(\w+): '(\w+Client)'/g),
  ].map((m) => [m[1], m[2]]),
)
const AWS_SERVICES = Object.keys(AWS_CLIENT_CLASS)

/**
 * Every AWS operation karpctl's source sends (src/context/aws.ts: `aws.call('iam', 'GetRole', …)` and
 * write/fresh/all), by service. The build fails on a call whose service or operation is not a literal:
 * the bundle would lack its command.
 */
function awsOperations() {
  const ops = new Map()
  const files = readdirSync('src', { recursive: true }).filter((f) => f.endsWith('.ts'))
  for (const f of files) {
    const text = readFileSync(join('src', f), 'utf8')
    for (const m of text.matchAll(
      new RegExp(`'(${AWS_SERVICES.join('|')})',\\s*'([A-Z][A-Za-z0-9]+)'`, 'g'),
    )) {
      if (!ops.has(m[1])) ops.set(m[1], new Set())
      ops.get(m[1]).add(m[2])
    }
    if (f === join('context', 'aws.ts')) continue // the Aws class itself forwards its parameters
    const dynamic = /\baws\??\.(call|write|fresh|all)\s*(<[^()]*?>)?\(\s*(?!['\s])/.exec(text)
    if (dynamic) throw new Error(`src/${f}: an AWS call whose service is not a literal: ${dynamic[0]}`)
  }
  return ops
}

/**
 * The bundles under dist/vendor/: the packages each holds, and its entry. The AWS clients are looked up
 * by command name (aws.ts), so each is whole, behind a getter: evaluated only when first asked for. Of
 * client-node karpctl uses KubeConfig alone: an ES module entry lets esbuild drop the rest (the
 * generated API, 2.5 MB).
 */
const VENDOR = {
  aws: {
    // The SDK's SigV4 signer (a dependency of every client) signs the EKS tokens of doctor --all-clusters.
    packages: [...AWS_SERVICES.map((c) => `@aws-sdk/client-${c}`), '@smithy/signature-v4'],
    // The SDK's ES modules (dist-es) are what esbuild can tree-shake: their CommonJS build is one file.
    mainFields: ['module', 'main'],
    entry: () => {
      const ops = awsOperations()
      return AWS_SERVICES.map((svc) => {
        const names = [AWS_CLIENT_CLASS[svc], ...[...(ops.get(svc) ?? [])].map((op) => `${op}Command`)]
        return `import { ${names.map((n) => `${n} as ${svc}_${n}`).join(', ')} } from '@aws-sdk/client-${svc}'\nexport const ${svc} = { ${names.map((n) => `${n}: ${svc}_${n}`).join(', ')} }`
      })
        .concat(
          "import { SignatureV4 } from '@smithy/signature-v4'\nexport const signatureV4 = { SignatureV4 }",
        )
        .join('\n')
    },
    require: (pkg) =>
      `require('./vendor/aws.js')[${JSON.stringify(pkg === '@smithy/signature-v4' ? 'signatureV4' : pkg.replace('@aws-sdk/client-', ''))}]`,
  },
  kube: {
    packages: ['@kubernetes/client-node'],
    entry: () => "export { KubeConfig } from '@kubernetes/client-node'",
    require: () => "require('./vendor/kube.js')",
  },
  // Every live run parses YAML (the kubeconfig, the Helm release): left in node_modules, its 74 files
  // were resolved and compiled on each run, about 50 ms before the first request.
  yaml: {
    packages: ['yaml'],
    entry: () => "export * from 'yaml'",
    require: () => "require('./vendor/yaml.js')",
  },
}
const bundleOf = new Map(Object.entries(VENDOR).flatMap(([b, v]) => v.packages.map((p) => [p, b])))

/** karpctl's imports of a vendored package become a require of its bundle (evaluated on first use). */
const vendorImports = {
  name: 'vendor-imports',
  setup(b) {
    b.onResolve({ filter: /^(@(aws-sdk|kubernetes)\/|@smithy\/signature-v4$|yaml$)/ }, (args) =>
      bundleOf.has(args.path) ? { path: args.path, namespace: 'vendor' } : undefined,
    )
    b.onLoad({ filter: /.*/, namespace: 'vendor' }, (args) => ({
      contents: `module.exports = ${VENDOR[bundleOf.get(args.path)].require(args.path)}`,
      loader: 'js',
    }))
  },
}

/**
 * src/facts/facts-validator.ts compiles the snapshot schema when it loads (~430 ms); the bundle gets
 * ajv's standalone code for the same schema and options instead (~35 ms to load, no compiler).
 */
const factsValidator = {
  name: 'facts-validator',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]facts[\\/]facts-validator\.ts$/ }, () => {
      const schema = JSON.parse(readFileSync('schema/facts.schema.json', 'utf8'))
      // The options of src/facts/facts-validator.ts, plus ESM standalone output (esbuild makes it CommonJS).
      const ajv = new Ajv({
        strict: true,
        allErrors: false,
        keywords: ['x-karpctl-free-text'],
        code: { source: true, esm: true },
      })
      return { contents: standaloneCode(ajv, ajv.compile(schema)), loader: 'js', resolveDir: 'src/facts' }
    })
  },
}

/**
 * The validator (335 KB of generated code, needed only by --snapshot) is a bundle of its own, so every
 * other run does not parse it as part of dist/cli.js.
 */
const validatorApart = {
  name: 'validator-apart',
  setup(b) {
    b.onResolve({ filter: /^\.\/facts-validator\.js$/ }, () => ({
      path: './facts-validator.js',
      external: true,
    }))
  },
}

/**
 * oclif's sort of command ids by localeCompare, at every start, builds ICU's collator (~10 ms):
 * src/boot/id-order.ts sorts karpctl's ids the same way without it. The build fails if oclif's code
 * changed, rather than ship its sort unpatched or patched wrongly.
 */
const OCLIF_ID_SORT = '.sort((a, b) => a.id.localeCompare(b.id));'
const idOrder = {
  name: 'oclif-id-order',
  setup(b) {
    b.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8')
      if (source.split(OCLIF_ID_SORT).length !== 2)
        throw new Error(
          `${args.path}: oclif's command sort is not \`${OCLIF_ID_SORT}\` once: update src/boot/id-order.ts`,
        )
      const order = JSON.stringify(resolve('src/boot/id-order.ts'))
      return {
        contents: `const { idOrder: karpctlIdOrder } = require(${order});\n${source.replace(OCLIF_ID_SORT, '.sort((a, b) => karpctlIdOrder(a.id, b.id));')}`,
        loader: 'js',
      }
    })
  },
}

/**
 * string-width 4 and strip-ansi 6 (oclif's help, through wrap-ansi 7) with the fast paths of
 * src/boot/fast-text.ts around them. Only those majors: another may measure differently.
 */
const FAST_TEXT = { 'string-width': ['4.', 'fastStringWidth'], 'strip-ansi': ['6.', 'fastStripAnsi'] }
const fastText = {
  name: 'fast-text',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/](string-width|strip-ansi)[\\/]index\.js$/ }, (args) => {
      const name = /(string-width|strip-ansi)[\\/]index\.js$/.exec(args.path)[1]
      const [major, wrapper] = FAST_TEXT[name]
      const { version } = JSON.parse(readFileSync(join(dirname(args.path), 'package.json'), 'utf8'))
      if (!version.startsWith(major)) return undefined
      const fast = JSON.stringify(resolve('src/boot/fast-text.ts'))
      const source = readFileSync(args.path, 'utf8')
      return {
        contents: `${source}\n;{ const fast = require(${fast}).${wrapper}(module.exports); fast.default = fast; module.exports = fast; }\n`,
        loader: 'js',
      }
    })
  },
}

rmSync('dist', { recursive: true, force: true })
mkdirSync('dist')
writeFileSync('dist/package.json', '{ "type": "commonjs" }\n')
await built({
  ...common,
  // The command_not_found hook is its own small bundle: oclif requires it by path (package.json).
  entryPoints: { cli: 'src/cli.ts', 'hooks/not-found': 'src/hooks/not-found.ts' },
  outdir: 'dist',
  plugins: [vendorImports, validatorApart, idOrder, fastText],
  // Imported by the commands that need them, from node_modules (rarely used); typescript and
  // ts-node only by oclif's development mode.
  external: ['./vendor/*', '@inquirer/*', '@cdktf/hcl2json', 'typescript', 'ts-node'],
})
for (const [name, v] of Object.entries(VENDOR)) {
  await built({
    ...common,
    stdin: { contents: v.entry(v.packages), resolveDir: process.cwd(), loader: 'js' },
    ...(v.mainFields ? { mainFields: v.mainFields } : {}),
    outfile: `dist/vendor/${name}.js`,
    // Third-party code: no source map (it would triple the package), its licences beside it.
    sourcemap: false,
  })
}
writeFileSync(
  'dist/help.js',
  "// oclif's help class (package.json `oclif.helpClass`), from the CLI bundle.\n" +
    "Object.defineProperty(exports, 'default', { enumerable: true, get: () => require('./cli.js').help() })\n",
)
writeFileSync(
  'dist/commands.js',
  "// oclif's command discovery target: the commands of the CLI bundle, evaluated on first use.\n" +
    "Object.defineProperty(exports, 'COMMANDS', { enumerable: true, get: () => require('./cli.js').commands() })\n",
)

await built({
  ...common,
  entryPoints: { 'facts-validator': 'src/facts/facts-validator.ts' },
  outdir: 'dist',
  plugins: [factsValidator],
})
const BUNDLES = ['cli.js', 'facts-validator.js', ...Object.keys(VENDOR).map((v) => `vendor/${v}.js`)]
for (const f of BUNDLES) {
  if (/\bimport\((?!\))/.test(readFileSync(`dist/${f}`, 'utf8')))
    throw new Error(`dist/${f} still has an import()`)
}
{
  // Each operation the source sends has its command in the bundle (and each client its class).
  const aws = createRequire(import.meta.url)(resolve('dist/vendor/aws.js'))
  for (const [svc, ops] of awsOperations())
    for (const name of [AWS_CLIENT_CLASS[svc], ...[...ops].map((op) => `${op}Command`)])
      if (typeof aws[svc]?.[name] !== 'function') throw new Error(`dist/vendor/aws.js lacks ${svc} ${name}`)
}
writeFileSync('dist/THIRD-PARTY-NOTICES.txt', notices([...bundledInputs]))
const hash = (file) => createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16)
const commands = [
  ...new Set(
    Object.keys(createRequire(import.meta.url)(resolve('dist/cli.js')).commands()).flatMap((id) => [
      id,
      id.split(':')[0],
    ]),
  ),
]
await built({
  ...common,
  entryPoints: { boot: 'src/boot/main.ts' },
  outdir: 'dist',
  define: {
    KARPCTL_BUILD: JSON.stringify({
      name: pkg.name,
      version: pkg.version,
      // oclif's version flags (argv[0] only), unless an init hook must run before it prints the version.
      versionFlags: pkg.oclif.hooks?.init ? [] : ['--version', ...(pkg.oclif.additionalVersionFlags ?? [])],
      engines: pkg.engines.node,
      nodeMin: nodeMinimum(pkg.engines.node),
      hashes: Object.fromEntries(BUNDLES.map((f) => [f, hash(`dist/${f}`)])),
      commands,
      // What may show a help screen (boot/help-cache.ts), as oclif decides: its help flags, and a topic alone.
      // None when an init hook must run first (as for the version flags).
      helpFlags: pkg.oclif.hooks?.init ? [] : ['--help', ...(pkg.oclif.additionalHelpFlags ?? [])],
      topics: Object.keys(pkg.oclif.topics ?? {}),
    }),
  },
})

/**
 * `engines.node` as the version boot checks (oclif's own check loads semver on every start): only a
 * minimum (`>=20.12`) can be checked that way, so anything else fails the build.
 */
function nodeMinimum(range) {
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim())
  if (!m) throw new Error(`package.json engines.node must be a minimum (>=X.Y.Z) for src/boot, not ${range}`)
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)]
}

/**
 * The name, version, licence and licence text of each package bundled into dist/: their code ships in
 * karpctl's files, so their notices ship beside it (esbuild's legalComments keep the in-source ones).
 */
function notices(inputs) {
  const roots = new Set()
  for (const input of inputs) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (m) roots.add(m[1])
  }
  const sections = []
  for (const root of [...roots].sort()) {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    const file = readdirSync(root).find((f) => /^(licen[cs]e|copying|notice)/i.test(f))
    const text = file
      ? readFileSync(join(root, file), 'utf8').trim()
      : `(no licence file; package.json says ${pkg.license})`
    sections.push(`${pkg.name}@${pkg.version} — ${pkg.license ?? 'see below'}\n\n${text}\n`)
  }
  return `Third-party packages bundled into karpctl's dist/ (${sections.length}):\n\n${sections.join(`\n${'-'.repeat(72)}\n\n`)}`
}
