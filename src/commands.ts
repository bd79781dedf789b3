// The commands karpctl lists: only ones that work end to end.
import Doctor from './commands/doctor.js'
import Install from './commands/install.js'

export const COMMANDS = {
  doctor: Doctor,
  install: Install,
}
