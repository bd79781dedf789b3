import { BaseCommand } from '../../base-command.js'
import { visible } from '../../report/terminal.js'

export default class TenantList extends BaseCommand<typeof TenantList> {
  static override summary =
    'List the tenants of the cluster: limits, usage, nodes, capacity types, role, and whether their checks pass.'
  static override examples = [
    { description: 'As a table', command: '<%= config.bin %> <%= command.id %>' },
    { description: 'As data', command: '<%= config.bin %> <%= command.id %> --json' },
  ]
  static override enableJsonFlag = true

  async run(): Promise<unknown> {
    const { tenantContext } = await import('../../tenant/command.js')
    const { tenantChecks, tenantRows } = await import('../../tenant/tenant.js')
    const t = await tenantContext(await this.liveOptions())
    t.ctx.aws.destroy()
    const rows = tenantRows(t.facts, tenantChecks(t.facts))
    if (this.jsonEnabled()) return { tenants: rows }
    if (rows.length === 0) {
      this.log(`No tenants on cluster ${t.install.clusterName}: add one with \`karpctl tenant add <name>\`.`)
      return undefined
    }
    const table = rows.map((r) =>
      [
        r.tenant,
        r.capacityTypes.join(',') || 'any',
        `${r.usage.cpu ?? '0'}/${r.limits.cpu ?? '∞'}`,
        `${r.usage.memory ?? '0'}/${r.limits.memory ?? '∞'}`,
        String(r.nodes),
        r.role ?? '?',
        r.checks,
      ].map(visible),
    ) // names, roles and usage come from the cluster: one line each
    const head = ['TENANT', 'CAPACITY', 'CPU', 'MEMORY', 'NODES', 'ROLE', 'CHECKS']
    const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] ?? '').length)))
    for (const row of [head, ...table])
      this.log(
        row
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      )
    for (const r of rows.filter((x) => x.problems.length))
      for (const p of r.problems) this.log(`  ${visible(r.tenant)}: ✖ ${visible(p)}`)
    return undefined
  }
}
