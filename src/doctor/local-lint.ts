// Lint before install: values files and Terraform helm_release blocks, no cluster needed.
import { tolerationValueTypes } from '../checks/toleration-value-types.js'
import type { CheckResult, Finding } from '../checks/types.js'
import { worst } from '../checks/run.js'
import { InputError, quote } from '../errors.js'
import type { LintIssue } from '../lint/values.js'

function toFinding(issue: LintIssue): Finding {
  const where = issue.file ? `${issue.file}${issue.line ? `:${issue.line}` : ''}` : issue.source
  return {
    status: 'fail',
    subject: where,
    message: `${where}: ${issue.message}`,
    evidence: { path: issue.path, value: issue.value, type: issue.valueType, source: issue.source },
    fix: { summary: issue.fix },
  }
}

export async function lintLocal(valuesFiles: string[], terraformDir?: string): Promise<CheckResult[]> {
  const { lintValuesFile } = await import('../lint/values.js')
  const issues: LintIssue[] = []
  const sources: string[] = []
  const notes: string[] = []
  for (const file of valuesFiles) {
    issues.push(...(await lintValuesFile(file)))
    sources.push(file)
  }
  if (terraformDir) {
    const { lintTerraformDir } = await import('../lint/terraform.js')
    const tf = await lintTerraformDir(terraformDir)
    // Nothing linted is not a pass: the directory (or the flag) is wrong.
    if (tf.files.length === 0)
      throw new InputError(
        `--terraform ${quote(terraformDir)} has no .tf files: pass the directory of the Terraform that installs Karpenter`,
        'TERRAFORM_NO_FILES',
      )
    if (tf.releases.length === 0)
      throw new InputError(
        `--terraform ${quote(terraformDir)}: no helm_release of a Karpenter chart in its ${tf.files.length} .tf file(s) (${tf.files.slice(0, 5).join(', ')}${tf.files.length > 5 ? ', …' : ''}): pass the directory that has it`,
        'TERRAFORM_NO_RELEASE',
      )
    issues.push(...tf.issues)
    sources.push(...tf.releases)
    notes.push(...tf.notes)
  }
  const findings: Finding[] =
    issues.length > 0
      ? issues.map(toFinding)
      : [
          {
            status: 'pass',
            message: `every annotation, label and toleration value in ${sources.join(', ')} is a string`,
          },
        ]
  for (const note of notes) findings.push({ status: 'skipped', message: note })
  return [{ meta: tolerationValueTypes.meta, status: worst(findings.map((f) => f.status)), findings }]
}
