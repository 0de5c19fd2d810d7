#!/usr/bin/env node
// Runs from a bundle of the TypeScript sources, built on first start and rebuilt when they change (launch.js).
import { launch } from './launch.js';

await launch('src/cli/control-plane.ts');
