#!/usr/bin/env node
// CommonJS (bin/package.json): an ES module entry would cost every start Node's ESM loader, ~10 ms.
require('../dist/boot.js').run(__dirname)
