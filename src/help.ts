// oclif's help, less one cost: it renders every piece of a help screen (each summary, description, flag
// and example) as an EJS template, compiling each one — about a third of `karpctl doctor --help` — when
// only the examples hold a tag, and those only `<%= config.bin %>` and `<%= command.id %>`. The same
// screens, word for word (test/integration/help.test.ts compares every one with oclif's own).
import { CommandHelp, Help } from '@oclif/core'
import { startRecording } from './boot/help-cache.js'

/** EJS's escaping of `<%=` output (its escapeXML). */
const escapeXml = (s: string) =>
  s.replace(
    /[&<>'"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c] as string,
  )

/** What the two tags stand for: the bin, and the command's id (none on the root and topic screens). */
interface Values {
  bin: string
  id?: string
}

/**
 * `render` for text with no tag but these two: the values put in as EJS would (escaped); anything else
 * is left to EJS.
 */
export function quickRender(render: (t: string) => string, values: () => Values): (t: string) => string {
  return (t) => {
    if (!t.includes('<%')) return t
    const { bin, id } = values()
    let out = t.replaceAll('<%= config.bin %>', escapeXml(bin))
    if (id !== undefined) out = out.replaceAll('<%= command.id %>', escapeXml(id))
    return out.includes('<%') ? render(t) : out
  }
}

class KarpctlCommandHelp extends CommandHelp {
  constructor(...args: ConstructorParameters<typeof CommandHelp>) {
    super(...args)
    this.render = quickRender(this.render, () => ({ bin: this.config.bin, id: this.command.id }))
  }
}

export default class KarpctlHelp extends Help {
  protected override CommandHelpClass = KarpctlCommandHelp
  constructor(...args: ConstructorParameters<typeof Help>) {
    super(...args)
    this.render = quickRender(this.render, () => ({ bin: this.config.bin }))
  }

  override async showHelp(argv: string[]): Promise<void> {
    // The next identical invocation prints this screen without loading the CLI (boot/help-cache.ts).
    startRecording()
    await super.showHelp(argv)
  }
}
