import { describe, expect, it } from 'vitest';
import { naming } from '../api/naming.ts';
import { FlagError, Flags, parseFlags } from '../cli/flags.ts';
import { FeatureGates } from './features.ts';
import {
  applyFlags,
  type ConfigError,
  decodeConfigurationObject,
  mergeStruct,
  type Origins,
  parseConfigText,
  validateConfiguration,
} from './load.ts';
import {
  asAnyStruct,
  configApiVersion,
  configFlagSpecs,
  configKind,
  controllerManagerSchema,
  defaultConfiguration,
} from './schema.ts';

const n = naming('orch');
const schema = controllerManagerSchema({
  naming: n,
  controllers: [{ name: 'csrsigning', aliases: [], workers: 5 }],
  features: new FeatureGates(),
});
const typeMeta = { apiVersion: configApiVersion(n), kind: configKind(n) };

function decode(doc: Record<string, unknown>) {
  return decodeConfigurationObject(schema, { ...typeMeta, ...doc }, 'f.yaml', [n]);
}

function problems(doc: Record<string, unknown>): string[] {
  try {
    decode(doc);
  } catch (err) {
    return (err as ConfigError).problems.map((p) => `${p.path}: ${p.problem}`);
  }
  return [];
}

describe('parseConfigText', () => {
  it('reads YAML and JSON', () => {
    expect(parseConfigText('a: 1\nb: [x]\n', 'f')).toEqual({ a: 1, b: ['x'] });
    expect(parseConfigText('{"a": 1, "b": ["x"]}', 'f')).toEqual({ a: 1, b: ['x'] });
  });

  it('keeps YAML 1.2 scalars: yes is a string, not a boolean', () => {
    expect(parseConfigText('a: yes\nb: true\n', 'f')).toEqual({ a: 'yes', b: true });
  });

  it('refuses several documents and syntax errors, naming the file', () => {
    expect(() => parseConfigText('a: 1\n---\nb: 2\n', 'x.conf')).toThrow('x.conf: holds more than one YAML document');
    expect(() => parseConfigText('a: [1\n', 'x.conf')).toThrow(/^x\.conf: cannot parse: /);
  });

  it('an empty file is no document', () => {
    expect(parseConfigText('', 'f')).toBeUndefined();
  });
});

describe('strict decoding', () => {
  it('keeps only what the document holds', () => {
    expect(decode({ logging: { verbosity: 4 } }).partial).toEqual({ logging: { verbosity: 4 } });
  });

  it('is typed by the schema, not by the value', () => {
    expect(problems({ generic: { clientConnection: { qps: '20' } } })).toEqual([
      'generic.clientConnection.qps: must be a number, got "20"',
    ]);
    expect(problems({ generic: { clientConnection: { burst: 1.5 } } })).toEqual([
      'generic.clientConnection.burst: must be an integer, got number 1.5',
    ]);
    expect(problems({ generic: { leaderElection: { leaderElect: 'true' } } })).toEqual([
      'generic.leaderElection.leaderElect: must be true or false, got "true"',
    ]);
    expect(problems({ generic: { leaderElection: { leaseDuration: '15 seconds' } } })).toEqual([
      'generic.leaderElection.leaseDuration: must be a duration string such as "15s" or "1h30m", got "15 seconds"',
    ]);
    expect(problems({ generic: { leaderElection: { retryPeriod: '0s' } } })).toEqual([
      'generic.leaderElection.retryPeriod: must be greater than zero',
    ]);
    expect(problems({ generic: { leaderElection: { resourceLock: 'endpoints' } } })).toEqual([
      'generic.leaderElection.resourceLock: must be one of "leases", got "endpoints"',
    ]);
    expect(problems({ generic: { clientConnection: { contentType: 'application/yaml' } } })).toEqual([
      'generic.clientConnection.contentType: must be one of "application/vnd.kubernetes.protobuf", "application/json", got "application/yaml"',
    ]);
  });

  it('checks map keys and values', () => {
    expect(problems({ concurrency: { csrsigning: 0, nope: 2 }, featureGates: { NativeHistograms: 'on' } })).toEqual([
      'concurrency[csrsigning]: must be at least 1, got 0',
      'concurrency[nope]: "nope" is not a known controller',
      'featureGates[NativeHistograms]: must be true or false, got "on"',
    ]);
  });

  it('refuses two spellings of one header name in one file', () => {
    expect(problems({ generic: { clientConnection: { extraHeaders: { 'X-A': ['1'], 'x-a': ['2'] } } } })).toEqual([
      'generic.clientConnection.extraHeaders[x-a]: duplicate of key "X-A"',
    ]);
    expect(problems({ generic: { clientConnection: { extraHeaders: { 'X-A': 'one' } } } })).toEqual([
      'generic.clientConnection.extraHeaders[X-A]: must be a list, got "one"',
    ]);
    expect(problems({ generic: { clientConnection: { extraHeaders: { 'X-A': ['a\r\nHost: x'] } } } })).toEqual([
      'generic.clientConnection.extraHeaders[X-A][0]: must not contain CR, LF or NUL',
    ]);
  });

  it('treats __proto__ as an ordinary (unknown) field', () => {
    const raw = parseConfigText(
      `apiVersion: ${typeMeta.apiVersion}\nkind: ${typeMeta.kind}\n__proto__: {polluted: true}\n`,
      'f',
    );
    expect(() => decodeConfigurationObject(schema, raw, 'f', [n])).toThrow('f: __proto__: unknown field');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('mergeStruct', () => {
  it('replaces lists even when the new one is a prefix of the old', () => {
    const config = defaultConfiguration(schema);
    const origins: Origins = new Map();
    mergeStruct(asAnyStruct(schema), config as never, { serving: { alwaysAllowPaths: ['/healthz'] } }, 'a', origins);
    expect(config.serving.alwaysAllowPaths).toEqual(['/healthz']);
    expect(origins.get('serving.alwaysAllowPaths')).toBe('a');
  });
});

describe('applyFlags', () => {
  const specs = configFlagSpecs(schema);
  const flags = (...argv: string[]) => new Flags(specs, parseFlags(specs, argv));

  it('splits list flags on commas, as the reference string slices do', () => {
    const config = defaultConfiguration(schema);
    applyFlags(
      schema,
      config,
      flags('--authorization-always-allow-paths=/healthz, /metrics', '--controllers=*'),
      new Map(),
    );
    expect(config.serving.alwaysAllowPaths).toEqual(['/healthz', '/metrics']);
    expect(config.generic.controllers).toEqual(['*']);
  });

  it('reads booleans, durations and the last of repeated scalars', () => {
    const config = defaultConfiguration(schema);
    applyFlags(
      schema,
      config,
      flags('--leader-elect=false', '--cluster-signing-duration=24h', '--v=3', '--v=5'),
      new Map(),
    );
    expect(config.generic.leaderElection.leaderElect).toBe(false);
    expect(config.csrSigningController.clusterSigningDuration).toBe(86_400_000);
    expect(config.logging.verbosity).toBe(5);
  });

  it('lets --cluster-signing-duration win over its deprecated alias, which works alone', () => {
    const both = defaultConfiguration(schema);
    applyFlags(
      schema,
      both,
      flags('--cluster-signing-duration=48h', '--experimental-cluster-signing-duration=1h'),
      new Map(),
    );
    expect(both.csrSigningController.clusterSigningDuration).toBe(48 * 3_600_000);
    const alone = defaultConfiguration(schema);
    const origins: Origins = new Map();
    applyFlags(schema, alone, flags('--experimental-cluster-signing-duration=1h'), origins);
    expect(alone.csrSigningController.clusterSigningDuration).toBe(3_600_000);
    expect(origins.get('csrSigningController.clusterSigningDuration')).toBe(
      'flag --experimental-cluster-signing-duration',
    );
  });

  it('keeps commas inside DNS patterns: one pattern per flag', () => {
    const config = defaultConfiguration(schema);
    applyFlags(
      schema,
      config,
      flags(
        `--${n.nodeAgent}-serving-approval`,
        `--${n.nodeAgent}-serving-approval-dns-pattern=node-[0-9]{1,3}\\.example\\.com`,
        `--${n.nodeAgent}-serving-approval-dns-pattern=.*\\.internal`,
      ),
      new Map(),
    );
    expect(config.csrApprovingController.nodeAgentServing).toMatchObject({
      enabled: true,
      dnsNamePatterns: ['node-[0-9]{1,3}\\.example\\.com', '.*\\.internal'],
    });
  });

  it('sets the seconds of maxExpirationSeconds from a duration flag', () => {
    const config = defaultConfiguration(schema);
    applyFlags(schema, config, flags(`--${n.nodeAgent}-serving-approval-max-duration=24h`), new Map());
    expect(config.csrApprovingController.nodeAgentServing.maxExpirationSeconds).toBe(86_400);
    expect(() =>
      applyFlags(schema, config, flags(`--${n.nodeAgent}-serving-approval-max-duration=1500ms`), new Map()),
    ).toThrow('must be a duration of whole seconds such as 90s or 24h');
    expect(() =>
      applyFlags(schema, config, flags(`--${n.nodeAgent}-serving-approval-max-duration=5m`), new Map()),
    ).toThrow('must be 0 (no limit) or at least 600');
  });

  it('throws FlagError for bad values', () => {
    const config = defaultConfiguration(schema);
    expect(() => applyFlags(schema, config, flags('--bind-address=example.org'), new Map())).toThrow(FlagError);
    expect(() => applyFlags(schema, config, flags('--leader-elect-retry-period=0'), new Map())).toThrow(
      'invalid argument "0" for "--leader-elect-retry-period" flag: must be greater than zero',
    );
  });
});

describe('validateConfiguration', () => {
  it('passes the defaults', () => {
    expect(validateConfiguration(defaultConfiguration(schema), new Map())).toEqual([]);
  });

  it('checks the leader election timings only when leader election is on', () => {
    const config = defaultConfiguration(schema);
    config.generic.leaderElection.retryPeriod = 9_000;
    expect(validateConfiguration(config, new Map()).map((p) => `${p.source}: ${p.path}: ${p.problem}`)).toEqual([
      'defaults: generic.leaderElection.renewDeadline: must be greater than retryPeriod*JitterFactor (10s <= 1.2*9s from defaults)',
    ]);
    config.generic.leaderElection.leaderElect = false;
    expect(validateConfiguration(config, new Map())).toEqual([]);
  });

  it('pairs serving cert and key', () => {
    const config = defaultConfiguration(schema);
    config.serving.certFile = '/tls.crt';
    const origins: Origins = new Map([['serving.certFile', 'flag --tls-cert-file']]);
    expect(validateConfiguration(config, origins)).toEqual([
      { source: 'flag --tls-cert-file', path: 'serving.certFile', problem: 'cannot specify cert without key' },
    ]);
  });

  it('accepts one pair for all signers, or pairs per signer', () => {
    const one = defaultConfiguration(schema);
    one.csrSigningController.clusterSigningCertFile = '/ca.crt';
    one.csrSigningController.clusterSigningKeyFile = '/ca.key';
    expect(validateConfiguration(one, new Map())).toEqual([]);
    const per = defaultConfiguration(schema);
    per.csrSigningController.nodeAgentServingSignerConfiguration = { certFile: '/s.crt', keyFile: '/s.key' };
    expect(validateConfiguration(per, new Map())).toEqual([]);
  });
});
