#!/usr/bin/env node
import { createRequire } from 'node:module'

await createRequire(import.meta.url)('../dist/boot.js').run(import.meta.url)
