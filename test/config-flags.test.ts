/**
 * The configuration schema's flags against the flags other parts of the daemon already define: the schema must
 * bind the same names with the same types, so the command can take its flags from the schema alone.
 */
import { describe, expect, it } from 'vitest';
import { controllerDefinitions } from '../controllers/index.ts';
import { naming } from '../src/api/naming.ts';
import { DAEMON_FLAG_NAMES, embeddedFlags } from '../src/cli/embedded-flags.ts';
import { Flags, parseDuration, parseFlags } from '../src/cli/flags.ts';
import { FeatureGates } from '../src/config/features.ts';
import { loadConfiguration } from '../src/config/load.ts';
import { configFileFlagSpecs, configFlagSpecs, controllerManagerSchema } from '../src/config/schema.ts';
import { reviewCacheFlags } from '../src/diagnostics/options.ts';

const n = naming();
const schema = controllerManagerSchema({ naming: n, controllers: controllerDefinitions, features: new FeatureGates() });
const bound = new Map(configFlagSpecs(schema).map((s) => [s.name, s]));

describe('the schema binds the flags the daemon already has', () => {
  it('the certificate flags, with the node agent and API server words', () => {
    for (const name of [
      'cluster-signing-cert-file',
      'cluster-signing-key-file',
      `cluster-signing-${n.nodeAgent}-serving-cert-file`,
      `cluster-signing-${n.nodeAgent}-client-key-file`,
      `cluster-signing-${n.apiServer}-client-cert-file`,
      'cluster-signing-legacy-unknown-key-file',
      'cluster-signing-duration',
      'experimental-cluster-signing-duration',
      'root-ca-file',
      `${n.nodeAgent}-serving-approval`,
      `${n.nodeAgent}-serving-approval-dns-pattern`,
      `${n.nodeAgent}-serving-approval-max-duration`,
    ]) {
      expect(bound.has(name), `--${name}`).toBe(true);
    }
  });

  it('the review cache flags stay with the diagnostics options, not the configuration', () => {
    for (const spec of reviewCacheFlags()) expect(bound.has(spec.name), spec.name).toBe(false);
  });

  it('one --concurrent-<name>-syncs flag per controller, with its worker count as default', () => {
    for (const d of controllerDefinitions) {
      expect(bound.get(`concurrent-${d.name}-syncs`), d.name).toMatchObject({
        type: 'int',
        default: String(d.workers),
      });
    }
  });

  it('no name clashes with the embedded control plane flags or --config/--config-dir', () => {
    const others = [...embeddedFlags(DAEMON_FLAG_NAMES), ...configFileFlagSpecs()].map((s) => s.name);
    for (const name of others) expect(bound.has(name), name).toBe(false);
  });
});

it('the controllers the daemon runs are valid --controllers values, by name and alias', async () => {
  const specs = configFlagSpecs(schema);
  const d = controllerDefinitions[0];
  const argv = ['--controllers=*', `--controllers=-${d.name}`, ...d.aliases.map((a) => `--controllers=${a}`)];
  const flags = new Flags(specs, parseFlags(specs, argv));
  const { config } = await loadConfiguration({ schema, accept: [n], flags });
  expect(config.generic.controllers).toEqual(['*', `-${d.name}`, ...d.aliases]);
});

describe('Go durations in flags', () => {
  it.each([
    ['0', 0],
    ['300ms', 300],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['250us', 0.25],
    ['250µs', 0.25],
    ['2m500µs', 120_000.5],
    ['1000000ns', 1],
    ['15', undefined],
    ['1x', undefined],
    ['', undefined],
  ])('%s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
});
