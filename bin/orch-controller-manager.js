#!/usr/bin/env node
// Runs from a bundle of the TypeScript sources, built on first start and rebuilt when they change (launch.js).
import { setFlagsFromString } from 'node:v8';
import { launch } from './launch.js';

// While allocation is fast (every watch event a new object), V8 lets the old generation grow to up to 4× what the
// last full collection kept before collecting again, and the daemon's peak RSS follows. A fixed 1.5× (Go's
// default, which the reference runs with, is 2×) unless the command line names its own.
if (!process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) {
  setFlagsFromString('--heap-growing-percent=50');
}

await launch('src/cli/controller-manager.ts');
