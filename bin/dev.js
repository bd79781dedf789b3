#!/usr/bin/env -S node --import tsx --no-warnings
// Runs the commands from src/ (tsx): oclif's development mode, from the package root.
require('@oclif/core').execute({ development: true, dir: require('node:path').join(__dirname, '..') })
