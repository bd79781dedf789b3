// aws-auth's mapRoles edited as a YAML document, not re-serialised: eksctl, Terraform and people wrote
// that text, and an entry karpctl adds or removes must leave every other byte of it as it was (a
// re-indented document shows up as a change to all of them in `kubectl diff` and in GitOps tools).
import { isMap, isSeq, parseDocument, type Document, type ToStringOptions, type YAMLSeq } from 'yaml'

/** One mapRoles entry. */
export interface MapRole {
  rolearn?: string
  username?: string
  groups?: string[]
}

interface Loaded {
  doc: Document
  /** Why the text cannot take an edit (not YAML, or not a list). */
  problem?: string
}

function load(text: string): Loaded {
  const doc = parseDocument(text)
  const [error] = doc.errors
  if (error) return { doc, problem: `is not valid YAML (${error.message.split('\n')[0] ?? ''})` }
  if (doc.contents !== null && !isSeq(doc.contents)) return { doc, problem: 'is not a YAML list' }
  return { doc }
}

/**
 * The options that print the document as it was written. eksctl puts a nested list at its key's
 * indent (`groups:\n  - system:nodes`), the AWS docs indent it; the yaml package's default is the
 * latter. No line folding: a long value stays on its line.
 */
export function styleOf(text: string): ToStringOptions {
  const lines = text.split('\n')
  for (let i = 1; i < lines.length; i++) {
    const item = /^( *)- /.exec(lines[i] ?? '')
    const key = /^( *(?:- )*)[^\s#-][^#]*:\s*$/.exec(lines[i - 1] ?? '')
    if (item?.[1] !== undefined && key?.[1] !== undefined)
      return { indentSeq: item[1].length > key[1].length, lineWidth: 0 }
  }
  return { lineWidth: 0 }
}

/** Why mapRoles cannot be edited, or undefined. */
export const mapRolesProblem = (text: string | undefined): string | undefined => load(text ?? '').problem

/** The entries of mapRoles; none when it is empty or not a list. */
export function mapRoles(text: string | undefined): MapRole[] {
  const { doc, problem } = load(text ?? '')
  const v = problem ? null : (doc.toJS() as unknown)
  return Array.isArray(v) ? (v as MapRole[]) : []
}

/** mapRoles with `role` appended after the existing entries, whose text is unchanged. */
export function withMapRole(text: string | undefined, role: MapRole): string {
  const { doc, problem } = load(text ?? '')
  if (problem) throw new Error(`aws-auth mapRoles ${problem}: fix it by hand, then run again`)
  const seq = (doc.contents ?? doc.createNode([])) as YAMLSeq
  // An empty `[]` becomes a block list: the entry reads as eksctl's do, and its removal leaves ''.
  if (seq.items.length === 0) seq.flow = false
  seq.add(doc.createNode(role))
  doc.contents = seq
  return doc.toString(styleOf(text ?? ''))
}

/** mapRoles without the entries of `roleArn`; every other entry's text unchanged. */
export function withoutMapRole(text: string | undefined, roleArn: string): string {
  const { doc, problem } = load(text ?? '')
  if (problem) throw new Error(`aws-auth mapRoles ${problem}: fix it by hand, then run again`)
  const seq = doc.contents as YAMLSeq | null
  if (!seq) return text ?? ''
  seq.items = seq.items.filter((item) => !(isMap(item) && item.get('rolearn') === roleArn))
  // A block list has no empty form: the text before karpctl's first entry was empty.
  if (seq.items.length === 0 && !seq.flow) return ''
  return doc.toString(styleOf(text ?? ''))
}
