// Every output a secret planted in the facts could reach: doctor's reports in each format, and a plan
// (printed, with --show-policies' documents, and as --json) that shows the facts as desired state.
import { catalog } from '../../src/checks/catalog.js'
import { runChecks } from '../../src/checks/run.js'
import type { Facts } from '../../src/facts/types.js'
import { planJson, renderPlan } from '../../src/plan/render.js'
import type { Plan } from '../../src/plan/types.js'
import { renderHuman } from '../../src/report/human.js'
import { jsonReport, junitReport, markdownReport, sarifReport } from '../../src/report/machine.js'

/** Every report format doctor prints, for these facts. */
export function reports(facts: Facts): Record<string, string> {
  const results = runChecks(catalog, facts)
  return {
    human: renderHuman(results, facts, { color: false, verbose: true }),
    json: JSON.stringify(jsonReport(results, facts)),
    sarif: sarifReport(results, catalog, '0.0.0'),
    junit: junitReport(results, facts, '0.0.0'),
    markdown: markdownReport(results, facts),
  }
}

/**
 * A plan that shows every planted value in every place a plan shows one: a change's old and new value,
 * the desired state, the documents (--show-policies) and a note; printed and as --json.
 */
export function plans(facts: Facts): Record<string, string> {
  const { kube, eks, meta } = facts as unknown as Record<string, unknown>
  const resource = {
    address: 'helm.karpenter',
    kind: 'Helm release',
    name: 'karpenter',
    group: 'Kubernetes',
    dependsOn: [],
    desired: { kube, eks },
    documents: { facts: { kube, eks } },
    permissions: [],
    observe: () => Promise.resolve(null),
    apply: () => Promise.resolve(),
    verdict: () => ({ action: 'update' as const, changes: [] }),
  }
  const verdict = {
    action: 'update' as const,
    changes: [
      { field: 'values', from: null, to: kube },
      { field: 'tags', from: eks, to: null },
    ],
    note: JSON.stringify(meta),
  }
  const plan: Plan = { title: 'Plan', steps: [{ resource, verdict, current: null }] }
  return {
    plan: renderPlan(plan, { color: false, showDocuments: true }),
    planJson: JSON.stringify(planJson(plan)),
  }
}

/** `shape in output` for each planted secret found in an output. */
export function leaks(
  plants: { shape: string; secret: string }[],
  outputs: Record<string, string>,
): string[] {
  const found: string[] = []
  for (const p of plants)
    for (const [where, text] of Object.entries(outputs))
      if (text.includes(p.secret)) found.push(`${p.shape} in ${where}`)
  return found
}
