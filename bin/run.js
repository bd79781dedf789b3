#!/usr/bin/env node
import { execute } from '../dist/cli.js'

await execute({ dir: import.meta.url })
