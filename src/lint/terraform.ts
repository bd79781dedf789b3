// Lints Terraform that installs Karpenter with the helm provider, before `terraform apply` does.
// The trap: `set { name = "serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints"
// value = "true" }` without `type = "string"` — the provider hands "true" to Helm's --set parser,
// which turns it into a boolean, and the ServiceAccount (or Deployment) is rejected by the API server.
// Same for toleration values, pod annotations/labels and nodeSelector values.
//
// HCL is parsed with @cdktf/hcl2json (a WASM build of HashiCorp's parser). It gives no source
// positions, so lines are found by searching the file text: best effort, and said so.
import { readdir, stat } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { InputError, quote } from '../errors.js'
import { redactClip } from '../redact/redact.js'
import {
  helmSetTypedValue,
  isStringTarget,
  lintHelmValues,
  lintValuesText,
  parseHelmPath,
  readTextFile,
  valueType,
  type LintIssue,
} from './values.js'

export interface TerraformLintResult {
  /** .tf files read, relative to the linted directory. */
  files: string[]
  /** Karpenter helm_release blocks found, as `file: helm_release.<name>`. */
  releases: string[]
  issues: LintIssue[]
  /** What could not be linted and why (expressions, dynamic blocks, templatefile...). */
  notes: string[]
}

type HclBlock = Record<string, unknown>

interface ReleaseContext {
  dir: string
  rel: string
  text: string
  name: string
  /** Offset of the `resource "helm_release" "<name>"` header in the file, for line search. */
  offset: number
  source: string
  result: TerraformLintResult
}

export async function lintTerraformDir(dir: string): Promise<TerraformLintResult> {
  const root = resolve(dir)
  const info = await stat(root).catch(() => null)
  if (!info?.isDirectory())
    throw new InputError(`${quote(dir)} is not a directory with Terraform files`, 'TERRAFORM_DIR_INVALID')
  const { parse } = await import('@cdktf/hcl2json')
  const result: TerraformLintResult = { files: [], releases: [], issues: [], notes: [] }
  for (const file of await tfFiles(root)) {
    const rel = relative(root, file) || file
    const text = await readTextFile(file, 'Terraform file', 'TERRAFORM_FILE')
    let json: Record<string, unknown>
    try {
      json = await parse(rel, text)
    } catch (err) {
      throw new InputError(hclErrorLine(rel, err), 'TERRAFORM_INVALID')
    }
    result.files.push(rel)
    for (const [name, block] of helmReleases(json)) {
      if (!isKarpenterRelease(block)) continue
      const source = `${rel} helm_release.${name}`
      result.releases.push(source)
      const offset = Math.max(
        0,
        text.search(new RegExp(`resource\\s+"helm_release"\\s+"${escapeRegExp(name)}"`)),
      )
      const ctx: ReleaseContext = { dir: dirname(file), rel, text, name, offset, source, result }
      lintSetEntries(ctx, block)
      await lintValuesList(ctx, block.values, root)
    }
  }
  return result
}

/** Every *.tf under dir (modules included), skipping .terraform, .git and other dot-directories. */
async function tfFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  const entries = await readdir(dir, { withFileTypes: true })
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await tfFiles(p)))
    else if (e.isFile() && e.name.endsWith('.tf')) out.push(p)
  }
  return out
}

/** hcl2json errors look like `parse config: [main.tf:3,14-15: Unclosed configuration block; ...]`. */
function hclErrorLine(rel: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const m = /([^\s[\]]+):(\d+),\d+(?:-\d+)?: ([^;\]]+)/.exec(message)
  if (m) return `${rel}:${m[2]}: invalid HCL: ${(m[3] as string).trim()}`
  return `${rel}: invalid HCL: ${message.replace(/\s+/g, ' ')}`
}

function helmReleases(json: Record<string, unknown>): [string, HclBlock][] {
  const resources = json.resource as Record<string, Record<string, HclBlock[]>> | undefined
  const releases = resources?.helm_release ?? {}
  return Object.entries(releases).flatMap(([name, blocks]) =>
    Array.isArray(blocks) ? blocks.map((b) => [name, b] as [string, HclBlock]) : [],
  )
}

function isKarpenterRelease(block: HclBlock): boolean {
  return [block.chart, block.repository].some((v) => typeof v === 'string' && /karpenter/i.test(v))
}

// ---------- set / set_sensitive ----------

function lintSetEntries(ctx: ReleaseContext, block: HclBlock) {
  const dynamic = block.dynamic as Record<string, unknown> | undefined
  for (const kind of ['set', 'set_sensitive']) {
    if (dynamic?.[kind])
      ctx.result.notes.push(
        `${ctx.source}: dynamic "${kind}" blocks are not linted (names and values are computed)`,
      )
    const entries = block[kind]
    if (entries === undefined) continue
    if (!Array.isArray(entries)) {
      ctx.result.notes.push(`${ctx.source}: ${kind} is an expression (${String(entries)}), not linted`)
      continue
    }
    for (const entry of entries) lintSetEntry(ctx, entry as HclBlock, kind === 'set_sensitive')
  }
}

function lintSetEntry(ctx: ReleaseContext, entry: HclBlock, sensitive: boolean) {
  const { name, value, type } = entry
  if (typeof name !== 'string') return
  if (isExpression(name)) {
    ctx.result.notes.push(`${ctx.source}: set name ${name} is an expression, not linted`)
    return
  }
  const keyPath = parseHelmPath(name)
  if (!isStringTarget(keyPath) || type === 'string') return
  if (typeof value === 'string' && isExpression(value)) {
    ctx.result.notes.push(
      `${ctx.source}: set "${name}" takes its value from ${value}; add type = "string" to be safe`,
    )
    return
  }
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return
  // Terraform turns a bare true/1 into the string "true"/"1"; the provider then lets Helm type it.
  const written = String(value)
  const typed = helmSetTypedValue(written)
  if (typeof typed === 'string') return
  const shown = sensitive ? '(sensitive value)' : JSON.stringify(value)
  const line = lineOf(ctx.text, `"${hclString(name)}"`, ctx.offset)
  ctx.result.issues.push({
    path: name,
    keyPath,
    value: sensitive ? '(sensitive)' : typed,
    valueType: valueType(typed),
    source: ctx.source,
    stringValue: sensitive ? '(sensitive)' : written,
    message: `${ctx.source}: set "${name}" = ${shown} has no type = "string": Helm parses it as a ${valueType(typed)} and Kubernetes rejects it`,
    fix: `add type = "string" to this set entry (set { name = ${JSON.stringify(name)} value = ${JSON.stringify(sensitive ? '...' : written)} type = "string" })`,
    file: ctx.rel,
    ...(line ? { line } : {}),
  })
}

// ---------- values = [...] ----------

async function lintValuesList(ctx: ReleaseContext, values: unknown, root: string) {
  if (values === undefined) return
  if (!Array.isArray(values)) {
    ctx.result.notes.push(`${ctx.source}: values is an expression (${String(values)}), not linted`)
    return
  }
  for (const [i, v] of values.entries()) {
    const label = `${ctx.source} values[${i}]`
    if (typeof v !== 'string') continue
    if (!isExpression(v)) {
      await lintInlineYaml(ctx, v, label)
      continue
    }
    const encoded = /^\$\{(yamlencode|jsonencode)\(([\s\S]*)\)\}$/.exec(v)
    if (encoded) {
      await lintEncodedObject(ctx, encoded[1] as string, encoded[2] as string, label)
      continue
    }
    const file = /^\$\{file\("((?:[^"\\]|\\.)*)"\)\}$/.exec(v)
    if (file) {
      await lintReferencedFile(ctx, file[1] as string, label, root)
      continue
    }
    ctx.result.notes.push(
      `${label}: ${redactClip(v, 61)} is an expression (templatefile, variable...), not linted`,
    )
  }
}

/** A heredoc or literal YAML string: lint it and map YAML lines back to the .tf file. */
async function lintInlineYaml(ctx: ReleaseContext, yamlText: string, label: string) {
  const lines = yamlText.split('\n')
  const firstIdx = lines.findIndex((l) => l.trim() !== '')
  const firstLine =
    firstIdx >= 0 ? lineOf(ctx.text, (lines[firstIdx] as string).trim(), ctx.offset) : undefined
  const lineOffset = firstLine !== undefined ? firstLine - (firstIdx + 1) : 0
  try {
    for (const { line, ...issue } of await lintValuesText(yamlText, label, lineOffset)) {
      // Without the heredoc's position the YAML line would point into the wrong file: drop it.
      ctx.result.issues.push({
        ...issue,
        file: ctx.rel,
        ...(firstLine !== undefined && line !== undefined ? { line } : {}),
      })
    }
  } catch (err) {
    if (!(err instanceof InputError)) throw err
    ctx.result.notes.push(`${label}: not valid YAML (${err.message}), not linted`)
  }
}

/** `yamlencode({...})`: HCL literals keep their types through yamlencode, so a bare `true` is a boolean. */
async function lintEncodedObject(ctx: ReleaseContext, fn: string, inner: string, label: string) {
  const { parse } = await import('@cdktf/hcl2json')
  let obj: unknown
  try {
    const json = await parse(`${ctx.rel}#values`, `locals {\n  v = ${inner}\n}\n`)
    obj = (json.locals as { v: unknown }[] | undefined)?.[0]?.v
  } catch {
    ctx.result.notes.push(`${label}: could not read the ${fn}(...) argument, not linted`)
    return
  }
  const at = ctx.text.indexOf(`${fn}(`, ctx.offset)
  for (const issue of lintHelmValues(obj, label)) {
    const line = at < 0 ? undefined : keyLine(ctx.text, issue, at)
    ctx.result.issues.push({
      ...issue,
      fix: `quote it inside ${fn}(): ${lastKey(issue)} = ${JSON.stringify(issue.stringValue)}`,
      file: ctx.rel,
      ...(line ? { line } : {}),
    })
  }
}

/**
 * The line of a map entry inside an HCL object literal, found by its (unique) key; list items
 * (toleration values) share the key `value`, so those get the line where the object starts.
 */
function keyLine(text: string, issue: LintIssue, from: number): number | undefined {
  const start = lineOf(text, '', from)
  const last = issue.keyPath[issue.keyPath.length - 1]
  if (issue.keyPath.some((k) => typeof k === 'number') || typeof last !== 'string') return start
  const m = new RegExp(`(^|[\\s{,])("?)${escapeRegExp(last)}\\2\\s*[=:]`).exec(text.slice(from))
  if (!m) return start
  return text.slice(0, from + m.index + (m[1] as string).length).split('\n').length
}

/** `file("${path.module}/values.yaml")`: lint the file it names when the path can be resolved here. */
async function lintReferencedFile(ctx: ReleaseContext, raw: string, label: string, root: string) {
  const path = raw.replace(/\$\{path\.module\}/g, ctx.dir).replace(/\$\{path\.root\}/g, root)
  if (isExpression(path)) {
    ctx.result.notes.push(`${label}: file path ${raw} uses an expression, not linted`)
    return
  }
  const full = resolve(ctx.dir, path)
  const exists = await stat(full).catch(() => null)
  if (!exists?.isFile()) {
    ctx.result.notes.push(`${label}: ${raw} not found (${full}), not linted`)
    return
  }
  const shown = relative(root, full) || full
  try {
    ctx.result.issues.push(
      ...(await lintValuesText(await readTextFile(full, 'values file', 'VALUES_FILE'), shown)),
    )
  } catch (err) {
    if (!(err instanceof InputError)) throw err
    ctx.result.notes.push(`${label}: ${err.message}`)
  }
}

// ---------- text helpers ----------

const isExpression = (s: string) => s.includes('${')

/** The HCL source spelling of a string value (backslashes and quotes escaped). */
function hclString(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')
}

/** 1-based line of the first occurrence of needle at or after offset. */
function lineOf(text: string, needle: string, offset: number): number | undefined {
  const at = text.indexOf(needle, offset)
  if (at < 0) return undefined
  return text.slice(0, at).split('\n').length
}

function lastKey(issue: LintIssue): string {
  const last = issue.keyPath[issue.keyPath.length - 1]
  return /^[A-Za-z_][\w-]*$/.test(String(last)) ? String(last) : JSON.stringify(String(last))
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
