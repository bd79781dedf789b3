// The commands karpctl lists: only ones that work end to end.
import Doctor from './commands/doctor.js'
import Install from './commands/install.js'
import TenantAdd from './commands/tenant/add.js'
import TenantList from './commands/tenant/list.js'
import TenantRemove from './commands/tenant/remove.js'
import Teardown from './commands/teardown.js'
import Upgrade from './commands/upgrade.js'
import Why from './commands/why.js'

export const COMMANDS = {
  doctor: Doctor,
  install: Install,
  'tenant:add': TenantAdd,
  'tenant:list': TenantList,
  'tenant:remove': TenantRemove,
  teardown: Teardown,
  upgrade: Upgrade,
  why: Why,
}
