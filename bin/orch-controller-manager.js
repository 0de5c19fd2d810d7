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

// V8 hands a function to TurboFan (a background thread) once it has run a few times `--interrupt-budget` (66 KiB)
// of bytecode: in a fresh process, ~300 functions within its first 500 CSRs, most of them warm rather than hot, for
// about a quarter of its CPU then. With 4 × that budget 86 are, the hot ones, a little later; the warm ones stay in
// baseline code. The command line may name its own.
if (!process.execArgv.some((arg) => /^--interrupt[-_]budget=/.test(arg))) {
  setFlagsFromString('--interrupt-budget=270336');
}

// V8's young generation starts at 1 MiB per half and doubles after each scavenge that finds it busy, up to 16 MiB: a
// start (the bundle, the first lists) scavenged 7 times and compacted once before its first CSR. Grown 16× at once,
// 3–4 times and mostly no compaction: the start to the first CSR in the kcm bench (2 runs each way, alternating; the
// mean of 8 medians of 5 starts) went from 0.254 to 0.233 s, its CPU from 0.230 to 0.205 s. The command line may
// name its own.
if (!process.execArgv.some((arg) => /^--semi[-_]space[-_]growth[-_]factor=/.test(arg))) {
  setFlagsFromString('--semi-space-growth-factor=16');
}

await launch('src/cli/controller-manager.ts');
