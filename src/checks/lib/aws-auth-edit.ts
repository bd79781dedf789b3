// The aws-auth edits doctor prints for users without eksctl: read data.mapRoles into a file, edit it with
// awk (POSIX: mawk, gawk and busybox all run it), apply only data.mapRoles server-side. The text was
// written by eksctl, Terraform (`yamlencode`: quoted keys, `[]` for no roles) or a person (comments,
// an indented list), so the edit reads its shape instead of appending blindly: appending an entry after
// `[]` made invalid YAML, and an aws-auth the authenticator cannot parse locks every node out. Any
// shape the awk does not know (a flow list with entries) is refused with a one-line reason on stderr,
// and the apply line then finds no edited file and writes nothing.
import { shellQuote } from './facts.js'

/** Where the current mapRoles text is read to, and where the edited text is written. */
export const MAP_ROLES_FILE = 'aws-auth-mapRoles.yaml'
export const MAP_ROLES_EDITED = 'aws-auth-mapRoles.new.yaml'

/** The read also drops an edited file left by an earlier run, so a refused edit never applies it. */
export const READ_MAP_ROLES = `rm -f ${MAP_ROLES_EDITED}; kubectl -n kube-system get configmap aws-auth --ignore-not-found -o jsonpath='{.data.mapRoles}' > ${MAP_ROLES_FILE}`
export const APPLY_MAP_ROLES = `kubectl -n kube-system create configmap aws-auth --from-file=mapRoles=${MAP_ROLES_EDITED} --dry-run=client -o yaml | kubectl apply --server-side --force-conflicts --field-manager=karpctl -f -`

const EDIT_BY_HAND = 'kubectl -n kube-system edit configmap aws-auth'

/**
 * Appends an entry at the indent of the list's first item. Comments, blank lines and `---` stay; an
 * empty flow list (`[]`, Terraform's yamlencode of no roles) is dropped, so the entry starts the list;
 * anything else that is not a block list is refused.
 */
const APPEND = (entry: string[]) =>
  [
    '/^[ \\t]*(#|$)/ || /^---[ \\t]*$/ { print; next }',
    '!n++ { if (/^[ \\t]*\\[[ \\t]*\\][ \\t]*(#.*)?$/) next; if (!/^ *-( |$)/) bad = 1; match($0, /^ */); i = substr($0, 1, RLENGTH) }',
    '{ print }',
    `END { if (bad) { print "aws-auth mapRoles is not a block list: add the entry with ${EDIT_BY_HAND}" > "/dev/stderr"; exit 1 } ${entry.map((l) => `print i "${l}";`).join(' ')} }`,
  ].join('\n')

/**
 * Sets the username of the entries whose rolearn is `arn` (quoted or not, as Terraform quotes keys and
 * values). Each top-level item is buffered, so its username is found before or after its rolearn and
 * never in the next item; an entry without a username line is refused.
 */
const SET_USERNAME = [
  'function flush(  k) { for (k = 1; k <= m; k++) { if (hit && b[k] ~ /^[ -]*"?username"?[ \\t]*:/) { sub(/:.*/, ": " u, b[k]); done = 1 } print b[k] } m = 0; hit = 0 }',
  'BEGIN { t = -1 }',
  '/^ *- / { match($0, /^ */); if (t < 0) t = RLENGTH; if (RLENGTH == t) flush() }',
  '{ b[++m] = $0; v = $0 }',
  'sub(/^[ -]*"?rolearn"?[ \\t]*:[ \\t]*/, "", v) { sub(/[ \\t]+#.*/, "", v); gsub(/["\' \\t]/, "", v); if (v == arn) hit = 1 }',
  `END { flush(); if (!done) { print "no username of " arn " in aws-auth mapRoles: set it with ${EDIT_BY_HAND}" > "/dev/stderr"; exit 1 } }`,
].join('\n')

/** `awk` over the read text into the edited file; on a refusal no edited file is left. */
const awk = (program: string, vars: Record<string, string>) =>
  `awk ${Object.entries(vars)
    .map(([k, v]) => `-v ${k}=${shellQuote(v)}`)
    .join(
      ' ',
    )} ${shellQuote(program)} ${MAP_ROLES_FILE} > ${MAP_ROLES_EDITED} || { rm -f ${MAP_ROLES_EDITED}; false; }`

/** The awk line that appends `entry` (its lines, unindented) to the read mapRoles. */
export const appendMapRoleCommand = (entry: string[]) => awk(APPEND(entry), {})

/** The awk line that sets the username of `rolearn`'s entries to `username`. */
export const setUsernameCommand = (rolearn: string, username: string) =>
  awk(SET_USERNAME, { arn: rolearn, u: username })
