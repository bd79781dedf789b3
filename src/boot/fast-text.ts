// oclif's help measures and wraps text with string-width 4 and strip-ansi 6 (through wrap-ansi 7), once
// per word and, while wrapping, once per character. Each call builds the ANSI regex and the emoji
// regex anew and runs both, though help text is nearly all printable ASCII: a tenth of a help screen's
// rendering. The build wraps both packages with these fast paths, which give the packages' own answer:
// - every ANSI sequence the regex removes starts with ESC (U+001B) or CSI (U+009B): a string with
//   neither is returned as it is;
// - in printable ASCII (U+0020..U+007E) there is no ANSI sequence, no emoji (the emoji regex needs a
//   code point above U+007F in every match: keycaps end in U+20E3) and no wide, control or combining
//   character: each code unit is one column.
// Anything else goes to the package.
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

export function fastStringWidth(original: (s: string) => number): (s: string) => number {
  return (s) => (typeof s === 'string' && PRINTABLE_ASCII.test(s) ? s.length : original(s))
}

export function fastStripAnsi<T>(original: (s: T) => T): (s: T) => T {
  return (s) => (typeof s === 'string' && !s.includes('\u001b') && !s.includes('\u009b') ? s : original(s))
}
