// The conditions the Terraform lint judges, one at a time (issue 12, item 8: mutation testing).
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import { lintTerraformDir } from '../../../src/lint/terraform.js'

let root: string
let n = 0
before(() => {
  root = mkdtempSync(join(tmpdir(), 'karpctl-tf-cond-'))
})
after(() => rmSync(root, { recursive: true, force: true }))

/** A fresh directory holding `files` (relative path → content). */
function tfDir(files: Record<string, string>): string {
  const dir = join(root, `d${++n}`)
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true })
    writeFileSync(join(dir, rel), content)
  }
  mkdirSync(dir, { recursive: true })
  return dir
}

/** One Karpenter helm_release named `k` whose body is `body`. */
const release = (body: string, header = 'chart = "oci://public.ecr.aws/karpenter/karpenter"') =>
  `resource "helm_release" "k" {\n  ${header}\n${body}\n}\n`

test('a file that is not a directory is an InputError naming it', async () => {
  const dir = tfDir({ 'main.tf': release('') })
  await assert.rejects(
    lintTerraformDir(join(dir, 'main.tf')),
    (err: unknown) =>
      err instanceof InputError &&
      err.code === 'TERRAFORM_DIR_INVALID' &&
      /main\.tf" is not a directory with Terraform files$/.test(err.message),
  )
})

test('every .tf below the directory is read, sorted, modules included; dot-directories, node_modules and other files are not', async () => {
  const dir = tfDir({
    'b.tf': '',
    'a.tf': '',
    'modules/karpenter/main.tf': release('  set {\n    name  = "podLabels.a"\n    value = 1\n  }'),
    '.terraform/modules/x/main.tf': release('  set {\n    name  = "podLabels.b"\n    value = 1\n  }'),
    'node_modules/y/main.tf': release('  set {\n    name  = "podLabels.c"\n    value = 1\n  }'),
    'notes.tf.txt': 'not terraform',
    'README.md': '# no',
  })
  const r = await lintTerraformDir(dir)
  assert.deepEqual(r.files, ['a.tf', 'b.tf', 'modules/karpenter/main.tf'])
  assert.deepEqual(r.releases, ['modules/karpenter/main.tf helm_release.k'])
  assert.deepEqual(
    r.issues.map((i) => [i.path, i.file, i.line]),
    [['podLabels.a', 'modules/karpenter/main.tf', 4]],
  )
})

test('a Karpenter release is found by its repository too, in any case; other charts are not linted', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'main.tf':
        release(
          '  set {\n    name  = "podLabels.a"\n    value = 1\n  }',
          'repository = "oci://public.ecr.aws/KARPENTER"\n  chart = "x"',
        ) +
        'resource "helm_release" "other" {\n  chart = "nginx"\n  repository = "https://example.com"\n  set {\n    name  = "podLabels.a"\n    value = 1\n  }\n}\n',
    }),
  )
  assert.deepEqual(r.releases, ['main.tf helm_release.k'])
  assert.deepEqual(
    r.issues.map((i) => i.source),
    ['main.tf helm_release.k'],
  )
})

test('an HCL error is one line naming the file and the line', async () => {
  const dir = tfDir({ 'bad.tf': 'resource "helm_release" {\n' })
  await assert.rejects(lintTerraformDir(dir), (err: unknown) => {
    assert.ok(err instanceof InputError)
    assert.equal(err.code, 'TERRAFORM_INVALID')
    assert.match(err.message, /^bad\.tf:\d+: invalid HCL: \S/)
    assert.ok(!err.message.includes('\n'))
    return true
  })
})

test('a set entry Helm types: the issue carries path, key path, typed value, source, file, line, message and fix', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': release('  set {\n    name  = "podAnnotations.a\\\\.b"\n    value = "8080"\n  }') }),
  )
  assert.deepEqual(r.issues, [
    {
      path: 'podAnnotations.a\\.b',
      keyPath: ['podAnnotations', 'a.b'],
      value: 8080,
      valueType: 'number',
      source: 'main.tf helm_release.k',
      stringValue: '8080',
      message:
        'main.tf helm_release.k: set "podAnnotations.a\\.b" = "8080" has no type = "string": Helm parses it as a number and Kubernetes rejects it',
      fix: 'add type = "string" to this set entry (set { name = "podAnnotations.a\\\\.b" value = "8080" type = "string" })',
      file: 'main.tf',
      line: 4,
    },
  ])
  assert.deepEqual(r.notes, [])
})

test('set_sensitive: the value is hidden in the issue, its message and its fix', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'main.tf': release('  set_sensitive {\n    name  = "podLabels.secret"\n    value = "true"\n  }'),
    }),
  )
  assert.equal(r.issues.length, 1)
  const i = r.issues[0]!
  assert.equal(i.value, '(sensitive)')
  assert.equal(i.stringValue, '(sensitive)')
  assert.equal(i.valueType, 'boolean')
  assert.match(i.message, /set "podLabels\.secret" = \(sensitive value\) has no type/)
  assert.match(i.fix, /value = "\.\.\." type = "string"/)
  assert.ok(!JSON.stringify(i).includes('true'))
})

test('a plain set of a boolean is shown as written, not hidden', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': release('  set {\n    name  = "podLabels.on"\n    value = true\n  }') }),
  )
  assert.equal(r.issues[0]!.value, true)
  assert.equal(r.issues[0]!.stringValue, 'true')
  assert.match(r.issues[0]!.message, /= true has no type/)
  assert.match(r.issues[0]!.fix, /value = "true" type = "string"/)
})

test('dynamic set and set_sensitive blocks are each noted, not linted', async () => {
  const dyn = (kind: string) =>
    `  dynamic "${kind}" {\n    for_each = var.s\n    content {\n      name  = ${kind}.key\n      value = ${kind}.value\n    }\n  }`
  const r = await lintTerraformDir(tfDir({ 'main.tf': release(`${dyn('set')}\n${dyn('set_sensitive')}`) }))
  assert.deepEqual(r.notes, [
    'main.tf helm_release.k: dynamic "set" blocks are not linted (names and values are computed)',
    'main.tf helm_release.k: dynamic "set_sensitive" blocks are not linted (names and values are computed)',
  ])
  assert.deepEqual(r.issues, [])
})

test('set = an expression is noted with the expression, not linted', async () => {
  const r = await lintTerraformDir(tfDir({ 'main.tf': release('  set = var.sets') }))
  assert.deepEqual(r.notes, ['main.tf helm_release.k: set is an expression (${var.sets}), not linted'])
})

test('a set name that is an expression is noted; a non-string name, a non-target, a non-scalar value and a string value are skipped', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'main.tf': release(
        [
          '  set = [',
          '    { name = "podLabels.${var.x}", value = true },',
          '    { name = 1, value = true },',
          '    { name = "settings.isolatedVPC", value = true },',
          '    { name = "podLabels.list", value = [1] },',
          '    { name = "podLabels.word", value = "yes" },',
          '    { name = "podLabels.float", value = 1.5 },',
          '  ]',
        ].join('\n'),
      ),
    }),
  )
  assert.deepEqual(r.notes, [
    'main.tf helm_release.k: set name podLabels.${var.x} is an expression, not linted',
  ])
  assert.deepEqual(r.issues, [])
})

test('a set value from an expression is noted, naming entry and expression', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': release('  set {\n    name  = "podLabels.team"\n    value = var.team\n  }') }),
  )
  assert.deepEqual(r.notes, [
    'main.tf helm_release.k: set "podLabels.team" takes its value from ${var.team}; add type = "string" to be safe',
  ])
})

test('type = "string" is what makes a typed value safe: another type is still reported', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'main.tf': release(
        '  set {\n    name  = "podLabels.a"\n    value = 1\n    type  = "auto"\n  }\n  set {\n    name  = "podLabels.b"\n    value = 1\n    type  = "string"\n  }',
      ),
    }),
  )
  assert.deepEqual(
    r.issues.map((i) => i.path),
    ['podLabels.a'],
  )
})

test('the line is searched from the release header on: an earlier mention of the name does not count', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'main.tf':
        '# "podLabels.a" is set below\nlocals {\n  x = "podLabels.a"\n}\n' +
        release('  set {\n    name  = "podLabels.a"\n    value = 1\n  }'),
    }),
  )
  assert.equal(r.issues[0]!.line, 8)
})

test('values: a non-string item is skipped; a long expression is noted cut at 60 characters', async () => {
  const long = `templatefile("\${path.module}/${'x'.repeat(60)}.yaml", {})`
  const r = await lintTerraformDir(tfDir({ 'main.tf': release(`  values = [42, ${long}, var.v]`) }))
  assert.deepEqual(r.issues, [])
  assert.equal(r.notes.length, 2)
  assert.match(r.notes[0]!, /^main\.tf helm_release\.k values\[1\]: \$\{templatefile\("/)
  assert.ok(r.notes[0]!.includes(`${'${templatefile("${path.module}/'}${'x'.repeat(29)}… is an expression`))
  assert.equal(
    r.notes[1],
    'main.tf helm_release.k values[2]: ${var.v} is an expression (templatefile, variable...), not linted',
  )
})

test('values: inline YAML that does not parse is noted, not linted', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': release('  values = [<<-EOT\n    a: [1, 2\n    EOT\n  ]') }),
  )
  assert.equal(r.notes.length, 1)
  assert.match(
    r.notes[0]!,
    /^main\.tf helm_release\.k values\[0\]: not valid YAML \(main\.tf helm_release\.k values\[0\]:\d+: invalid YAML: .*\), not linted$/,
  )
})

test('values: inline YAML lines map back to the .tf file', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'main.tf': release('  values = [<<-EOT\n\n    podLabels:\n      a: "x"\n      b: 2\n    EOT\n  ]'),
    }),
  )
  assert.deepEqual(
    r.issues.map((i) => [i.path, i.file, i.line, i.source]),
    [['podLabels.b', 'main.tf', 7, 'main.tf helm_release.k values[0]']],
  )
})

test('values: jsonencode is linted like yamlencode, with a fix inside the call and the key line', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'main.tf': release(
        '  values = [\n    jsonencode({\n      podLabels = {\n        "a.b" = 1\n        plain = true\n      }\n      tolerations = [{ key = "k", value = false }]\n    }),\n  ]',
      ),
    }),
  )
  assert.deepEqual(
    r.issues.map((i) => [i.path, i.line, i.fix]),
    [
      ['tolerations[0].value', 4, 'quote it inside jsonencode(): value = "false"'],
      ['podLabels.a\\.b', 6, 'quote it inside jsonencode(): "a.b" = "1"'],
      ['podLabels.plain', 7, 'quote it inside jsonencode(): plain = "true"'],
    ],
  )
})

test('values: a file() path is resolved from path.module and path.root; a missing file or an expression path is noted', async () => {
  const dir = tfDir({
    'root.yaml': 'podLabels:\n  a: 1\n',
    'modules/m/values.yaml': 'podLabels:\n  b: true\n',
    'modules/m/main.tf': release(
      '  values = [\n    file("${path.root}/root.yaml"),\n    file("${path.module}/values.yaml"),\n    file("${path.module}/none.yaml"),\n    file("${var.dir}/x.yaml"),\n  ]',
    ),
  })
  const r = await lintTerraformDir(dir)
  assert.deepEqual(
    r.issues.map((i) => [i.path, i.file, i.line, i.source]),
    [
      ['podLabels.a', 'root.yaml', 2, 'root.yaml'],
      ['podLabels.b', join('modules', 'm', 'values.yaml'), 2, join('modules', 'm', 'values.yaml')],
    ],
  )
  assert.equal(r.notes.length, 2)
  assert.equal(
    r.notes[0],
    `modules/m/main.tf helm_release.k values[2]: \${path.module}/none.yaml not found (${join(dir, 'modules/m/none.yaml')}), not linted`,
  )
  assert.equal(
    r.notes[1],
    'modules/m/main.tf helm_release.k values[3]: file path ${var.dir}/x.yaml uses an expression, not linted',
  )
})

test('values: a file() that is not valid YAML is noted with the reason, not thrown', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'bad.yaml': '- a\n', 'main.tf': release('  values = [file("${path.module}/bad.yaml")]') }),
  )
  assert.deepEqual(r.issues, [])
  assert.deepEqual(r.notes, [
    'main.tf helm_release.k values[0]: bad.yaml is a YAML list, not a map of Helm values (key: value)',
  ])
})

test('values = an expression is noted with it', async () => {
  const r = await lintTerraformDir(tfDir({ 'main.tf': release('  values = var.values') }))
  assert.deepEqual(r.notes, ['main.tf helm_release.k: values is an expression (${var.values}), not linted'])
})

test('the HCL reason is given whole, and lines of two digits are read whole', async () => {
  const dir = tfDir({ 'bad.tf': `${'\n'.repeat(11)}resource "helm_release" "k" {\n` })
  await assert.rejects(lintTerraformDir(dir), (err: unknown) => {
    assert.ok(err instanceof InputError)
    assert.equal(err.message, 'bad.tf:12: invalid HCL: Unclosed configuration block')
    return true
  })
})

test('an HCL error whose position spans lines is given as the parser said it, on one line', async () => {
  const dir = tfDir({ 'bad.tf': 'locals {\n  a = \n}\n' })
  await assert.rejects(lintTerraformDir(dir), (err: unknown) => {
    assert.ok(err instanceof InputError)
    assert.equal(err.code, 'TERRAFORM_INVALID')
    assert.equal(
      err.message,
      'bad.tf: invalid HCL: parse config: [bad.tf:2,7-3,1: Invalid expression; Expected the start of an expression, but found an invalid expression token.]',
    )
    return true
  })
})

test('a .tf file that is not UTF-8 is a Terraform file error', async () => {
  const dir = tfDir({})
  writeFileSync(join(dir, 'main.tf'), Buffer.from([0x23, 0x20, 0xe9, 0x0a]))
  await assert.rejects(lintTerraformDir(dir), (err: unknown) => {
    assert.ok(err instanceof InputError)
    assert.equal(err.code, 'TERRAFORM_FILE_INVALID')
    assert.equal(
      err.message,
      `Terraform file "${join(dir, 'main.tf')}" is not UTF-8 text (binary, or UTF-16?): save it as UTF-8`,
    )
    return true
  })
})

test('a chart given as a list that mentions karpenter is not a Karpenter release', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': 'resource "helm_release" "k" {\n  chart = ["karpenter"]\n}\n' }),
  )
  assert.deepEqual(r.releases, [])
})

test('a set name with a quote is found on its line', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': release('  set {\n    name  = "podLabels.a\\"b"\n    value = 1\n  }') }),
  )
  assert.equal(r.issues[0]!.path, 'podLabels.a"b')
  assert.equal(r.issues[0]!.line, 4)
})

test('values: only a whole yamlencode(...) or file(...) expression is read; one inside a template is noted', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'v.yaml': 'podLabels:\n  a: 1\n',
      'main.tf': release(
        '  values = [\n    "${var.a}${yamlencode({ podLabels = { a = 1 } })}",\n    "${yamlencode({ podLabels = { a = 1 } })}${var.a}",\n    "${var.a}${file("v.yaml")}",\n    "${file("v.yaml")}${var.a}",\n  ]',
      ),
    }),
  )
  assert.deepEqual(r.issues, [])
  assert.equal(r.notes.length, 4)
  assert.ok(r.notes.every((n) => n.endsWith('is an expression (templatefile, variable...), not linted')))
})

test('values: an expression of exactly 60 characters is noted whole', async () => {
  const v = `\${var.${'x'.repeat(53)}}`
  assert.equal(v.length, 60)
  const r = await lintTerraformDir(tfDir({ 'main.tf': release(`  values = [var.${'x'.repeat(53)}]`) }))
  assert.deepEqual(r.notes, [
    `main.tf helm_release.k values[0]: ${v} is an expression (templatefile, variable...), not linted`,
  ])
})

test('values: an inline YAML string whose first line is not in the file as written gets no line, and its error line is its own', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': release('  values = ["podLabels: {\\"a\\": 1}", "a: [\\"x\\""]') }),
  )
  assert.deepEqual(
    r.issues.map((i) => [i.path, i.file, 'line' in i]),
    [['podLabels.a', 'main.tf', false]],
  )
  assert.equal(r.notes.length, 1)
  assert.match(
    r.notes[0]!,
    /^main\.tf helm_release\.k values\[1\]: not valid YAML \(main\.tf helm_release\.k values\[1\]:1: invalid YAML: /,
  )
})

test('values: a blank inline YAML string is nothing to lint', async () => {
  const r = await lintTerraformDir(tfDir({ 'main.tf': release('  values = ["\\n  \\n"]') }))
  assert.deepEqual(r.issues, [])
  assert.deepEqual(r.notes, [])
})

test('values: keys at the start of a line, and keys HCL escapes, are found (or fall back to the call line)', async () => {
  const r = await lintTerraformDir(
    tfDir({
      'main.tf': release('  values = [yamlencode({\npodLabels = {\n"1a" = 1\n"q\\"k" = 2\n}\n})]'),
    }),
  )
  assert.deepEqual(
    r.issues.map((i) => [i.path, i.line, i.fix]),
    [
      ['podLabels.1a', 5, 'quote it inside yamlencode(): "1a" = "1"'],
      ['podLabels.q"k', 3, 'quote it inside yamlencode(): "q\\"k" = "2"'],
    ],
  )
})

test('values: a file() that is a directory is not found; one that is not UTF-8 is noted as a values file', async () => {
  const dir = tfDir({
    'd.yaml/x': '',
    'main.tf': release('  values = [file("${path.module}/d.yaml"), file("${path.module}/latin1.yaml")]'),
  })
  writeFileSync(join(dir, 'latin1.yaml'), Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]))
  const r = await lintTerraformDir(dir)
  assert.deepEqual(r.notes, [
    `main.tf helm_release.k values[0]: \${path.module}/d.yaml not found (${join(dir, 'd.yaml')}), not linted`,
    `main.tf helm_release.k values[1]: values file "${join(dir, 'latin1.yaml')}" is not UTF-8 text (binary, or UTF-16?): save it as UTF-8`,
  ])
})

test('files are read in locale order (a.tf before B.tf), not in the order the directory lists them', async () => {
  const r = await lintTerraformDir(tfDir({ 'B.tf': '', 'a.tf': '', '_c.tf': '' }))
  assert.deepEqual(r.files, ['_c.tf', 'a.tf', 'B.tf'])
})

test('values: a heredoc that starts with a blank line of spaces still maps its lines to the .tf file', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': release('  values = [<<EOT\n   \npodLabels:\n  a: 1\nEOT\n  ]') }),
  )
  assert.deepEqual(
    r.issues.map((i) => [i.path, i.line]),
    [['podLabels.a', 6]],
  )
})

test('values: an issue inline YAML cannot place (a key YAML reads as a number) has no line', async () => {
  const r = await lintTerraformDir(
    tfDir({ 'main.tf': release('  values = [<<EOT\npodLabels: {1: true}\nEOT\n  ]') }),
  )
  assert.equal(r.issues.length, 1)
  assert.equal(r.issues[0]!.file, 'main.tf')
  assert.ok(!('line' in r.issues[0]!))
})
