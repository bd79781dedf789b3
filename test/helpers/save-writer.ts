// A child process that saves snapshots to one path, for the atomic-save tests: `count` saves of facts
// whose notes carry `marker`, padded to about `mib` MiB so each write takes a while.
// Usage: node --import tsx test/helpers/save-writer.ts <path> <marker> <count> <mib>
import { saveSnapshot } from '../../src/facts/snapshot.js'
import { healthyFacts } from './facts.js'

const [path, marker, count, mib] = process.argv.slice(2) as [string, string, string, string]
const facts = healthyFacts((f) => {
  // Words, not one run of letters: redaction judges long base64-like runs, which would dominate the time.
  f.meta.notes = [marker, `${marker}: ${'ab '.repeat((Number(mib) * 1024 * 1024) / 3)}`]
})
for (let i = 0; i < Number(count); i++) await saveSnapshot(path, facts)
process.stdout.write('done\n')
