/**
 * The configuration file, the drop-in directory and the command line together, through real files and the real
 * flag parser: every row of spec §2.6, drop-in order, flags last, and errors that name the file and the field.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { naming } from '../src/api/naming.ts';
import { Flags, parseFlags } from '../src/cli/flags.ts';
import { FeatureGates } from '../src/config/features.ts';
import { ConfigError, encodeConfiguration, type LoadedConfiguration, loadConfiguration } from '../src/config/load.ts';
import {
  type ConfigSchema,
  configApiVersion,
  configFileFlagSpecs,
  configFlagSpecs,
  configKind,
  controllerManagerSchema,
  defaultConfiguration,
} from '../src/config/schema.ts';

const n = naming('orch');
const k8s = naming('kubernetes');
const HEAD = `apiVersion: ${configApiVersion(n)}\nkind: ${configKind(n)}\n`;
const CONTROLLERS = [
  { name: 'csrsigning', aliases: ['certificatesigningrequest-signing-controller'], workers: 5 },
  { name: 'csrapproving', aliases: ['certificatesigningrequest-approving-controller'], workers: 5 },
  { name: 'statefulset', aliases: [], workers: 5 },
];

function schema(): ConfigSchema {
  return controllerManagerSchema({ naming: n, controllers: CONTROLLERS, features: new FeatureGates() });
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'config-merge-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes `files` (paths relative to the temporary root) and loads `main.yaml` and `conf.d` as the daemon would. */
async function load(
  files: Record<string, string>,
  opts: { main?: string | null; dir?: boolean; argv?: string[]; accept?: (typeof n)[] } = {},
): Promise<LoadedConfiguration> {
  await mkdir(join(root, 'conf.d'), { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(root, name, '..'), { recursive: true });
    await writeFile(join(root, name), text);
  }
  const s = schema();
  const specs = [...configFlagSpecs(s), ...configFileFlagSpecs()];
  const flags = new Flags(specs, parseFlags(specs, opts.argv ?? []));
  const main = opts.main === undefined ? 'main.yaml' : opts.main;
  return loadConfiguration({
    schema: s,
    accept: opts.accept ?? [n],
    configFile: main === null ? undefined : join(root, main),
    configDir: opts.dir === false ? undefined : join(root, 'conf.d'),
    flags,
  });
}

async function loadError(files: Record<string, string>, opts: Parameters<typeof load>[1] = {}): Promise<string> {
  try {
    await load(files, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(Error);
    return (err as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('§2.6 merge rules', () => {
  it('scalar field: the drop-in value replaces the main value; absent, the main value stays', async () => {
    const { config, origins } = await load({
      'main.yaml': `${HEAD}generic:\n  leaderElection:\n    leaseDuration: 30s\n    renewDeadline: 20s\nlogging:\n  verbosity: 4\n`,
      'conf.d/10-lease.conf': `${HEAD}generic:\n  leaderElection:\n    leaseDuration: 45s\n`,
    });
    expect(config.generic.leaderElection.leaseDuration).toBe(45_000);
    expect(config.generic.leaderElection.renewDeadline).toBe(20_000);
    expect(config.logging.verbosity).toBe(4);
    expect(origins.get('generic.leaderElection.leaseDuration')).toBe(join(root, 'conf.d/10-lease.conf'));
    expect(origins.get('generic.leaderElection.renewDeadline')).toBe(join(root, 'main.yaml'));
  });

  it('embedded structure: merged field by field, at every depth', async () => {
    const { config } = await load({
      'main.yaml': [
        HEAD,
        'generic:',
        '  clientConnection:',
        '    qps: 50',
        '  leaderElection:',
        '    resourceName: cm-lease',
        '    retryPeriod: 3s',
        'csrSigningController:',
        '  nodeAgentServingSignerConfiguration:',
        '    certFile: /pki/serving.crt',
        '',
      ].join('\n'),
      'conf.d/50-ns.conf': [
        HEAD,
        'generic:',
        '  leaderElection:',
        '    resourceNamespace: ops',
        'csrSigningController:',
        '  nodeAgentServingSignerConfiguration:',
        '    keyFile: /pki/serving.key',
        '',
      ].join('\n'),
    });
    const defaults = defaultConfiguration(schema());
    expect(config.generic.leaderElection).toEqual({
      ...defaults.generic.leaderElection,
      resourceName: 'cm-lease',
      retryPeriod: 3_000,
      resourceNamespace: 'ops',
    });
    // A sibling structure the drop-in never names is untouched.
    expect(config.generic.clientConnection.qps).toBe(50);
    expect(config.generic.clientConnection.burst).toBe(30);
    expect(config.csrSigningController.nodeAgentServingSignerConfiguration).toEqual({
      certFile: '/pki/serving.crt',
      keyFile: '/pki/serving.key',
    });
  });

  it('list: replaced whole, never concatenated', async () => {
    const { config } = await load({
      'main.yaml': `${HEAD}generic:\n  controllers: ['*', '-csrapproving']\nserving:\n  alwaysAllowPaths: [/healthz, /metrics]\ncsrApprovingController:\n  nodeAgentServing:\n    dnsNamePatterns: ['[a-z0-9-]+\\.nodes\\.example\\.com', 'node-[0-9]+']\n`,
      'conf.d/10.conf': `${HEAD}generic:\n  controllers: [csrsigning]\ncsrApprovingController:\n  nodeAgentServing:\n    dnsNamePatterns: []\n`,
    });
    expect(config.generic.controllers).toEqual(['csrsigning']);
    expect(config.csrApprovingController.nodeAgentServing.dnsNamePatterns).toEqual([]);
    expect(config.serving.alwaysAllowPaths).toEqual(['/healthz', '/metrics']);
  });

  it('map of scalars: merged per key, drop-in keys win, other keys stay', async () => {
    const { config, origins } = await load({
      'main.yaml': `${HEAD}featureGates:\n  NativeHistograms: false\n  ShardedListAndWatch: true\nconcurrency:\n  csrsigning: 2\n  statefulset: 8\n`,
      'conf.d/10.conf': `${HEAD}featureGates:\n  NativeHistograms: true\n  CoordinatedLeaderElection: true\nconcurrency:\n  statefulset: 3\n`,
    });
    expect(config.featureGates).toEqual({
      NativeHistograms: true,
      ShardedListAndWatch: true,
      CoordinatedLeaderElection: true,
    });
    expect(config.concurrency).toEqual({ csrsigning: 2, csrapproving: 5, statefulset: 3 });
    expect(origins.get('featureGates[ShardedListAndWatch]')).toBe(join(root, 'main.yaml'));
    expect(origins.get('featureGates[NativeHistograms]')).toBe(join(root, 'conf.d/10.conf'));
  });

  it('map of string lists: merged per key; a key present in the drop-in has its whole list replaced', async () => {
    const { config } = await load({
      'main.yaml': [
        HEAD,
        'generic:',
        '  clientConnection:',
        '    extraHeaders:',
        '      X-Tenant: [blue]',
        '      Impersonate-Group: [ops, audit]',
        '',
      ].join('\n'),
      // Header names are case-insensitive: the drop-in's spelling names the same key.
      'conf.d/10.conf': `${HEAD}generic:\n  clientConnection:\n    extraHeaders:\n      impersonate-group: [sre]\n      X-Trace: [on]\n`,
    });
    expect(config.generic.clientConnection.extraHeaders).toEqual({
      'x-tenant': ['blue'],
      'impersonate-group': ['sre'],
      'x-trace': ['on'],
    });
  });
});

describe('drop-in directory', () => {
  it('applies *.conf files in lexical (byte) order of their names', async () => {
    const set = (name: string) => `${HEAD}generic:\n  leaderElection:\n    resourceName: ${name}\n`;
    const { files, config } = await load({
      'main.yaml': set('main'),
      'conf.d/20-c.conf': set('20-c'),
      'conf.d/10-a.conf': set('10-a'),
      'conf.d/2-b.conf': set('2-b'),
      'conf.d/Z.conf': set('Z'),
      'conf.d/a.conf': set('a'),
    });
    expect(files.map((f) => f.slice(root.length + 1))).toEqual([
      'main.yaml',
      'conf.d/10-a.conf',
      'conf.d/2-b.conf',
      'conf.d/20-c.conf',
      'conf.d/Z.conf',
      'conf.d/a.conf',
    ]);
    expect(config.generic.leaderElection.resourceName).toBe('a');
  });

  it('ignores files not named *.conf and directories, even with broken content', async () => {
    const { files, config } = await load({
      'main.yaml': `${HEAD}logging:\n  verbosity: 3\n`,
      'conf.d/10.conf': `${HEAD}logging:\n  verbosity: 5\n`,
      'conf.d/90.yaml': 'not: [valid',
      'conf.d/91.conf.bak': `${HEAD}logging:\n  verbosity: 9\n`,
      'conf.d/README': 'drop-ins go here',
      'conf.d/sub.conf/99.conf': `${HEAD}logging:\n  verbosity: 9\n`,
    });
    expect(files.map((f) => f.slice(root.length + 1))).toEqual(['main.yaml', 'conf.d/10.conf']);
    expect(config.logging.verbosity).toBe(5);
  });

  it('follows a link to a file', async () => {
    await writeFile(join(root, 'shared.yaml'), `${HEAD}logging:\n  format: json\n`);
    await mkdir(join(root, 'conf.d'));
    await symlink(join(root, 'shared.yaml'), join(root, 'conf.d', '30-shared.conf'));
    const { config } = await load({ 'main.yaml': HEAD });
    expect(config.logging.format).toBe('json');
  });

  it('works without --config, over the defaults', async () => {
    const { config, files } = await load({ 'conf.d/10.conf': `${HEAD}logging:\n  verbosity: 7\n` }, { main: null });
    expect(files).toEqual([join(root, 'conf.d/10.conf')]);
    expect(config.logging.verbosity).toBe(7);
    expect(config.generic.leaderElection.leaseDuration).toBe(15_000);
  });

  it('fails when the directory cannot be read', async () => {
    const s = schema();
    await expect(loadConfiguration({ schema: s, accept: [n], configDir: join(root, 'missing') })).rejects.toThrow(
      `${join(root, 'missing')}: cannot read the drop-in directory: ENOENT`,
    );
  });
});

describe('command-line flags come last', () => {
  const files = {
    'main.yaml': [
      HEAD,
      'generic:',
      '  controllers: [csrsigning, statefulset]',
      '  leaderElection:',
      '    leaseDuration: 30s',
      'featureGates:',
      '  ShardedListAndWatch: true',
      '  NativeHistograms: true',
      'concurrency:',
      '  statefulset: 7',
      '',
    ].join('\n'),
    'conf.d/10.conf': `${HEAD}generic:\n  leaderElection:\n    leaseDuration: 40s\nconcurrency:\n  csrsigning: 4\n`,
  };

  it('win over the main file and the drop-ins, by the same rules', async () => {
    const { config, origins } = await load(files, {
      argv: [
        '--leader-elect-lease-duration=1m',
        '--feature-gates=NativeHistograms=false',
        '--controllers=*',
        '--controllers=-csrapproving',
        '--concurrent-csrsigning-syncs=9',
        '--v=6',
      ],
    });
    expect(config.generic.leaderElection.leaseDuration).toBe(60_000);
    // map flag: per key; the file's other gate stays
    expect(config.featureGates).toEqual({ ShardedListAndWatch: true, NativeHistograms: false });
    // list flag: replaces the list
    expect(config.generic.controllers).toEqual(['*', '-csrapproving']);
    // one key of a map: the other keys keep the files' values
    expect(config.concurrency).toEqual({ csrsigning: 9, csrapproving: 5, statefulset: 7 });
    expect(config.logging.verbosity).toBe(6);
    expect(origins.get('generic.leaderElection.leaseDuration')).toBe('flag --leader-elect-lease-duration');
    expect(origins.get('concurrency[csrsigning]')).toBe('flag --concurrent-csrsigning-syncs');
  });

  it('only flags actually given count: their --help defaults do not undo the files', async () => {
    const { config } = await load(files);
    expect(config.generic.leaderElection.leaseDuration).toBe(40_000);
    expect(config.generic.controllers).toEqual(['csrsigning', 'statefulset']);
    expect(config.concurrency.statefulset).toBe(7);
  });

  it('are checked like file values, in the reference flag error style', async () => {
    expect(await loadError(files, { argv: ['--feature-gates=ComponentSLIs=false'] })).toBe(
      'invalid argument "ComponentSLIs=false" for "--feature-gates" flag: cannot set feature gate ComponentSLIs to false, feature is locked to true',
    );
    expect(await loadError(files, { argv: ['--feature-gates=Nope=true'] })).toBe(
      'invalid argument "Nope=true" for "--feature-gates" flag: unrecognized feature gate: Nope',
    );
    expect(await loadError(files, { argv: ['--logging-format=xml'] })).toBe(
      'invalid argument "xml" for "--logging-format" flag: must be one of "text", "json", got "xml"',
    );
    expect(await loadError(files, { argv: ['--controllers=*,bogus'] })).toBe(
      'invalid argument "bogus" for "--controllers" flag: "bogus" is not in the list of known controllers',
    );
    expect(await loadError(files, { argv: ['--concurrent-statefulset-syncs=0'] })).toBe(
      'invalid argument "0" for "--concurrent-statefulset-syncs" flag: must be at least 1, got 0',
    );
    expect(await loadError(files, { argv: ['--kube-api-qps=fast'] })).toBe(
      'invalid argument "fast" for "--kube-api-qps" flag: must be a number',
    );
  });

  it('accept a fractional --kube-api-qps, as the reference float32 flag does', async () => {
    const { config } = await load(files, { argv: ['--kube-api-qps=0.5'] });
    expect(config.generic.clientConnection.qps).toBe(0.5);
  });
});

describe('errors name the file and the field', () => {
  it('unknown field', async () => {
    const msg = await loadError({
      'main.yaml': `${HEAD}generic:\n  leaderElection:\n    leaseDurration: 30s\n`,
    });
    expect(msg).toBe(`${join(root, 'main.yaml')}: generic.leaderElection.leaseDurration: unknown field`);
  });

  it('unknown field spelled in another case gets a hint', async () => {
    const msg = await loadError({ 'main.yaml': `${HEAD}generic:\n  leaderelection: {}\n` });
    expect(msg).toBe(
      `${join(root, 'main.yaml')}: generic.leaderelection: unknown field (did you mean "leaderElection"?)`,
    );
  });

  it('bad value in a drop-in names the drop-in', async () => {
    const msg = await loadError({
      'main.yaml': HEAD,
      'conf.d/10-ok.conf': `${HEAD}logging:\n  verbosity: 3\n`,
      'conf.d/20-bad.conf': `${HEAD}generic:\n  leaderElection:\n    leaseDuration: 15\n`,
    });
    expect(msg).toBe(
      `${join(root, 'conf.d/20-bad.conf')}: generic.leaderElection.leaseDuration: must be a duration string such as "15s" or "1h30m", got number 15`,
    );
  });

  it('reports every problem of a file at once', async () => {
    const msg = await loadError({
      'main.yaml': [
        HEAD,
        'generic:',
        '  clientConnection:',
        '    burst: "30"',
        '    extraHeaders:',
        '      Authorization: [Bearer x]',
        '      "Bad Header": [x]',
        '  controllers: [csrsigning, nope]',
        'featureGates:',
        '  ComponentSLIs: false',
        '  Imaginary: true',
        'serving:',
        '  securePort: 70000',
        '  bindAddress: localhost',
        '  alwaysAllowPaths: [/a*b]',
        'logging:',
        '  format: xml',
        'csrApprovingController:',
        '  nodeAgentServing:',
        '    maxExpirationSeconds: 60',
        '    dnsNamePatterns: ["("]',
        '',
      ].join('\n'),
    });
    const f = join(root, 'main.yaml');
    expect(msg.split('\n')).toEqual([
      `${f}: generic.clientConnection.burst: must be an integer, got "30"`,
      `${f}: generic.clientConnection.extraHeaders[Authorization]: is set by the client itself and cannot be added`,
      `${f}: generic.clientConnection.extraHeaders[Bad Header]: not a valid HTTP header name`,
      `${f}: generic.controllers[1]: "nope" is not in the list of known controllers`,
      `${f}: featureGates[ComponentSLIs]: cannot set feature gate ComponentSLIs to false, feature is locked to true`,
      `${f}: featureGates[Imaginary]: unrecognized feature gate: Imaginary`,
      `${f}: serving.securePort: must be at most 65535, got 70000`,
      `${f}: serving.bindAddress: must be an IP address`,
      `${f}: serving.alwaysAllowPaths[0]: only trailing * allowed in "/a*b"`,
      `${f}: logging.format: must be one of "text", "json", got "xml"`,
      `${f}: csrApprovingController.nodeAgentServing.maxExpirationSeconds: must be 0 (no limit) or at least 600`,
      expect.stringMatching(
        /^.*: csrApprovingController\.nodeAgentServing\.dnsNamePatterns\[0\]: not a valid regular expression: /,
      ),
    ]);
  });

  it('null values, wrong shapes and duplicate keys', async () => {
    const f = join(root, 'main.yaml');
    expect(await loadError({ 'main.yaml': `${HEAD}generic:\n  leaderElection:\n    resourceName:\n` })).toBe(
      `${f}: generic.leaderElection.resourceName: null is not allowed (leave the field out to keep the value from the defaults or earlier files)`,
    );
    expect(await loadError({ 'main.yaml': `${HEAD}generic:\n  controllers: csrsigning\n` })).toBe(
      `${f}: generic.controllers: must be a list, got "csrsigning"`,
    );
    expect(await loadError({ 'main.yaml': `${HEAD}featureGates: [NativeHistograms]\n` })).toBe(
      `${f}: featureGates: must be a map, got a list`,
    );
    expect(await loadError({ 'main.yaml': `${HEAD}logging:\n  verbosity: 1\n  verbosity: 2\n` })).toMatch(
      new RegExp(`^${escapeRe(f)}: cannot parse: Map keys must be unique`),
    );
  });

  it('apiVersion and kind are required in every file, of one accepted flavor', async () => {
    const f = join(root, 'main.yaml');
    expect(await loadError({ 'main.yaml': 'logging:\n  verbosity: 1\n' })).toBe(
      [`${f}: apiVersion: required`, `${f}: kind: required`].join('\n'),
    );
    expect(await loadError({ 'main.yaml': `apiVersion: ${configApiVersion(k8s)}\nkind: ${configKind(k8s)}\n` })).toBe(
      [
        `${f}: apiVersion: must be "${configApiVersion(n)}", got "${configApiVersion(k8s)}"`,
        `${f}: kind: must be "${configKind(n)}", got "${configKind(k8s)}"`,
      ].join('\n'),
    );
    expect(await loadError({ 'main.yaml': `apiVersion: ${configApiVersion(n)}\nkind: Flagz\n` })).toBe(
      `${f}: kind: must be "${configKind(n)}", got "Flagz"`,
    );
    expect(await loadError({ 'main.yaml': HEAD, 'conf.d/1.conf': 'logging:\n  verbosity: 1\n' })).toBe(
      [`${join(root, 'conf.d/1.conf')}: apiVersion: required`, `${join(root, 'conf.d/1.conf')}: kind: required`].join(
        '\n',
      ),
    );
    expect(await loadError({ 'main.yaml': '' })).toBe(
      `${f}: must be a YAML or JSON map with apiVersion and kind, got null`,
    );
  });

  it('with --api-flavor=auto either flavor is accepted, but all files must agree', async () => {
    const k8sHead = `apiVersion: ${configApiVersion(k8s)}\nkind: ${configKind(k8s)}\n`;
    const ok = await load({ 'main.yaml': `${k8sHead}logging:\n  verbosity: 1\n` }, { accept: [n, k8s] });
    expect(ok.flavor).toBe('kubernetes');
    expect(ok.config.logging.verbosity).toBe(1);
    expect(await loadError({ 'main.yaml': k8sHead, 'conf.d/1.conf': HEAD }, { accept: [n, k8s] })).toBe(
      `${join(root, 'conf.d/1.conf')}: apiVersion: names the orch flavor, but ${join(root, 'main.yaml')} names the kubernetes flavor`,
    );
  });

  it('rules across fields name the file that set the field', async () => {
    const msg = await loadError({
      'main.yaml': `${HEAD}csrSigningController:\n  clusterSigningCertFile: /pki/ca.crt\n  clusterSigningKeyFile: /pki/ca.key\n`,
      'conf.d/10.conf': `${HEAD}csrSigningController:\n  apiServerClientSignerConfiguration:\n    keyFile: /pki/client.key\n`,
    });
    const main = join(root, 'main.yaml');
    const dropIn = join(root, 'conf.d/10.conf');
    expect(msg.split('\n')).toEqual([
      `${dropIn}: csrSigningController.apiServerClientSignerConfiguration.keyFile: cannot specify key without cert`,
      `${main}: csrSigningController.clusterSigningCertFile: cannot be set together with per-signer files such as csrSigningController.apiServerClientSignerConfiguration.keyFile (from ${dropIn}): use one pair for all signers or one pair per signer`,
    ]);
    expect(
      await loadError(
        { 'main.yaml': `${HEAD}generic:\n  leaderElection:\n    renewDeadline: 20s\n` },
        { argv: ['--leader-elect-lease-duration=20s'], dir: false },
      ),
    ).toBe(
      `flag --leader-elect-lease-duration: generic.leaderElection.leaseDuration: must be greater than renewDeadline (20s <= 20s from ${main})`,
    );
  });

  it('a missing main file names itself', async () => {
    const msg = await loadError({}, { main: 'absent.yaml', dir: false });
    expect(msg).toMatch(
      new RegExp(`^${escapeRe(join(root, 'absent.yaml'))}: cannot read the configuration file: ENOENT`),
    );
  });
});

describe('file formats', () => {
  const yaml = [
    HEAD,
    'generic:',
    '  clientConnection: {qps: 5.5, burst: 11, contentType: application/json, extraHeaders: {X-Tenant: [blue, green]}}',
    '  leaderElection: {leaderElect: false, leaseDuration: 1m30s}',
    '  controllers: ["*"]',
    'featureGates: {NativeHistograms: false}',
    'csrSigningController: {clusterSigningDuration: 720h}',
    'logging: {format: json}',
    '',
  ].join('\n');
  const json = JSON.stringify({
    apiVersion: configApiVersion(n),
    kind: configKind(n),
    generic: {
      clientConnection: {
        qps: 5.5,
        burst: 11,
        contentType: 'application/json',
        extraHeaders: { 'X-Tenant': ['blue', 'green'] },
      },
      leaderElection: { leaderElect: false, leaseDuration: '1m30s' },
      controllers: ['*'],
    },
    featureGates: { NativeHistograms: false },
    csrSigningController: { clusterSigningDuration: '720h' },
    logging: { format: 'json' },
  });

  it('a JSON main file and a YAML main file decode alike', async () => {
    const fromYaml = await load({ 'main.yaml': yaml }, { dir: false });
    const fromJson = await load({ 'main.json': json }, { main: 'main.json', dir: false });
    expect(fromJson.config).toEqual(fromYaml.config);
    expect(fromYaml.config.generic.clientConnection).toEqual({
      qps: 5.5,
      burst: 11,
      contentType: 'application/json',
      extraHeaders: { 'x-tenant': ['blue', 'green'] },
    });
    expect(fromYaml.config.generic.leaderElection.leaseDuration).toBe(90_000);
    expect(fromYaml.config.csrSigningController.clusterSigningDuration).toBe(720 * 3_600_000);
  });

  it('drop-ins may be JSON too', async () => {
    const { config } = await load({
      'main.yaml': yaml,
      'conf.d/10.conf': JSON.stringify({
        apiVersion: configApiVersion(n),
        kind: configKind(n),
        logging: { verbosity: 8 },
      }),
    });
    expect(config.logging).toEqual({ format: 'json', verbosity: 8 });
  });

  it('the encoded configuration (what /configz shows) loads back to the same configuration', async () => {
    const first = await load({ 'main.yaml': yaml }, { dir: false, argv: ['--concurrent-statefulset-syncs=2'] });
    const encoded = encodeConfiguration(schema(), first.config, n);
    expect(encoded).toMatchObject({
      apiVersion: configApiVersion(n),
      kind: configKind(n),
      generic: { leaderElection: { leaseDuration: '1m30s', renewDeadline: '10s' } },
      csrSigningController: { clusterSigningDuration: '720h0m0s' },
    });
    const again = await load({ 'again.json': JSON.stringify(encoded) }, { main: 'again.json', dir: false });
    expect(again.config).toEqual(first.config);
  });
});

it('ConfigError carries each problem as source, path and text', async () => {
  try {
    await load({ 'main.yaml': `${HEAD}serving:\n  securePort: -1\n` });
    throw new Error('not refused');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      { source: join(root, 'main.yaml'), path: 'serving.securePort', problem: 'must be at least 0, got -1' },
    ]);
  }
});

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
