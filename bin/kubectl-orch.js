#!/usr/bin/env node
// The `kubectl orch` plugin: kubectl runs any `kubectl-<name>` on PATH as `kubectl <name>`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/kubectl-orch/main.ts');
