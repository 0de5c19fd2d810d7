import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseExecCredential } from './exec-credential.ts';
import { KubeConfig, type KubeConfigOptions, mergeKubeConfigs, parseKubeConfig } from './kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file in the test's directory. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A kubeconfig document of one cluster, user and context, the current one. */
function doc(name: string, cluster: object, user: object, extra: object = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
    ...extra,
  };
}

describe('parseKubeConfig', () => {
  it('reads every field of clusters, users and contexts, relative paths from the file directory', () => {
    const text = stringify({
      clusters: [
        {
          name: 'c',
          cluster: {
            server: 'https://api:6443',
            'certificate-authority': 'pki/ca.crt',
            'insecure-skip-tls-verify': false,
            'tls-server-name': 'api.internal',
            'proxy-url': 'socks5://proxy:1080',
          },
        },
      ],
      users: [
        { name: 'certs', user: { 'client-certificate': 'u.crt', 'client-key': '/abs/u.key', tokenFile: 'tok' } },
        {
          name: 'plugin',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: 'bin/issue',
              args: ['--x'],
              env: [{ name: 'A', value: 'b' }],
              interactiveMode: 'Never',
            },
          },
        },
        { name: 'on-path', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'issue' } } },
      ],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'certs', namespace: 'ns' } }],
      'current-context': 'x',
    });
    expect(parseKubeConfig(text, '/etc/k')).toEqual({
      clusters: [
        {
          name: 'c',
          server: 'https://api:6443',
          caFile: '/etc/k/pki/ca.crt',
          caData: undefined,
          skipTLSVerify: false,
          tlsServerName: 'api.internal',
          proxyUrl: 'socks5://proxy:1080',
        },
      ],
      users: [
        expect.objectContaining({
          name: 'certs',
          certFile: '/etc/k/u.crt',
          keyFile: '/abs/u.key',
          tokenFile: '/etc/k/tok',
        }),
        expect.objectContaining({
          name: 'plugin',
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: '/etc/k/bin/issue',
            args: ['--x'],
            env: [{ name: 'A', value: 'b' }],
            provideClusterInfo: false,
            interactiveMode: 'Never',
          },
        }),
        // A bare command name is looked up in $PATH, not in the file's directory.
        expect.objectContaining({ name: 'on-path', exec: expect.objectContaining({ command: 'issue' }) }),
      ],
      contexts: [{ name: 'x', cluster: 'c', user: 'certs', namespace: 'ns' }],
      currentContext: 'x',
    });
  });

  it.each([
    ['a cluster without a server', doc('a', {}, {}), 'clusters[0].cluster.server: Required value'],
    ['an entry without a name', { users: [{ user: {} }] }, 'users[0].name: Required value'],
    [
      'two entries of one name',
      {
        contexts: [
          { name: 'x', context: {} },
          { name: 'x', context: {} },
        ],
      },
      'contexts[1].name: Duplicate value: "x"',
    ],
    [
      'a token that is a number',
      doc('a', { server: 's' }, { token: 123 }),
      'users[0].user.token: Invalid value: must be a string',
    ],
    [
      'insecure-skip-tls-verify as text',
      doc('a', { server: 's', 'insecure-skip-tls-verify': 'yes' }, {}),
      'clusters[0].cluster.insecure-skip-tls-verify: Invalid value: must be true or false',
    ],
    ['clusters as a mapping', { clusters: { a: 1 } }, 'clusters: Invalid value: must be a list'],
    [
      'an auth-provider',
      doc('a', { server: 's' }, { 'auth-provider': { name: 'oidc' } }),
      'users[0].user.auth-provider: Unsupported value: auth-provider plugins are not supported; use an exec plugin',
    ],
    [
      'a token and a password',
      doc('a', { server: 's' }, { token: 't', username: 'u', password: 'p' }),
      'users[0].user: Invalid value: a token and a username/password may not both be set',
    ],
    [
      'an exec plugin without its apiVersion',
      doc('a', { server: 's' }, { exec: { command: 'x' } }),
      'users[0].user.exec.apiVersion: Required value',
    ],
    ['a document that is a list', [1, 2], '(root): Invalid value: must be a mapping'],
  ])('refuses %s, naming the field and the rule', (_, body, message) => {
    expect(() => parseKubeConfig(JSON.stringify(body), '/', 'my.conf')).toThrow(`my.conf: ${message}`);
  });
});

describe('mergeKubeConfigs', () => {
  it('keeps the first of each name and the first current context set, as client-go does', () => {
    const one: KubeConfigOptions = {
      clusters: [{ name: 'a', server: 'https://one' }],
      users: [{ name: 'u', token: 'one' }],
      contexts: [{ name: 'x', cluster: 'a', user: 'u' }],
      currentContext: '',
    };
    const two: KubeConfigOptions = {
      clusters: [
        { name: 'a', server: 'https://two' },
        { name: 'b', server: 'https://b' },
      ],
      users: [{ name: 'u', token: 'two' }],
      contexts: [{ name: 'y', cluster: 'b', user: 'u' }],
      currentContext: 'y',
    };
    const three: KubeConfigOptions = { clusters: [], users: [], contexts: [], currentContext: 'x' };
    expect(mergeKubeConfigs([one, two, three])).toEqual({
      clusters: [
        { name: 'a', server: 'https://one' },
        { name: 'b', server: 'https://b' },
      ],
      users: [{ name: 'u', token: 'one' }],
      contexts: [
        { name: 'x', cluster: 'a', user: 'u' },
        { name: 'y', cluster: 'b', user: 'u' },
      ],
      currentContext: 'y',
    });
  });
});

describe('KubeConfig.loadFromDefault', () => {
  const first = file('first.yaml', stringify(doc('one', { server: 'https://one' }, { token: 'one' })));
  const second = file('second.yaml', stringify(doc('two', { server: 'https://two' }, { token: 'two' })));

  it("merges $KUBECONFIG's files, skipping those that do not exist", () => {
    const kc = new KubeConfig();
    kc.loadFromDefault({ KUBECONFIG: [join(dir, 'missing'), first, second].join(':') });
    expect(kc.currentContext).toBe('one');
    expect(kc.clusters.map((c) => c.server)).toEqual(['https://one', 'https://two']);
  });

  it('reads ~/.kube/config without $KUBECONFIG', () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), readFileSync(second));
    const kc = new KubeConfig();
    kc.loadFromDefault({ HOME: home });
    expect(kc.getCurrentCluster()?.server).toBe('https://two');
  });

  it("falls back to the pod's service account, and else says what it looked for", () => {
    const kc = new KubeConfig();
    const env = { KUBECONFIG: join(dir, 'none'), KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' };
    kc.loadFromDefault(env);
    expect(kc.getCurrentCluster()).toMatchObject({
      server: 'https://[fd00::1]:443',
      caFile: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
    });
    expect(kc.getCurrentUser()?.tokenFile).toBe('/var/run/secrets/kubernetes.io/serviceaccount/token');
    expect(() => new KubeConfig().loadFromDefault({ KUBECONFIG: join(dir, 'none') })).toThrow(
      `no kubeconfig: none of $KUBECONFIG's files (${join(dir, 'none')}) exists, and this is not a pod (KUBERNETES_SERVICE_HOST is not set)`,
    );
  });
});

describe('KubeConfig.loadFromCluster', () => {
  it("reads the account's namespace, and its token file at each ask", async () => {
    const account = join(dir, 'account');
    mkdirSync(account);
    writeFileSync(join(account, 'namespace'), 'kube-system');
    writeFileSync(join(account, 'ca.crt'), 'CA');
    writeFileSync(join(account, 'token'), 'first\n');
    const kc = new KubeConfig();
    kc.loadFromCluster(account, { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' });
    expect(kc.getContextObject(kc.currentContext)?.namespace).toBe('kube-system');
    expect(await kc.credentials()).toEqual({
      tls: expect.objectContaining({ ca: Buffer.from('CA') }),
      authorization: 'Bearer first',
    });
    writeFileSync(join(account, 'token'), 'rotated');
    expect((await kc.credentials()).authorization).toBe('Bearer rotated');
  });
});

describe('KubeConfig.credentials', () => {
  const load = (cluster: object, user: object) => {
    const kc = new KubeConfig();
    kc.loadFromString(stringify(doc('a', { server: 'https://a', ...cluster }, user)), dir);
    return kc;
  };

  it('presents inline certificates, or files read again at each ask, and the TLS name and verification asked for', async () => {
    file('client.crt', 'CERT');
    file('client.key', 'KEY');
    const kc = load(
      { 'certificate-authority-data': b64('CA'), 'tls-server-name': 'api', 'insecure-skip-tls-verify': true },
      { 'client-certificate': 'client.crt', 'client-key': 'client.key' },
    );
    expect(await kc.credentials()).toEqual({
      tls: {
        ca: Buffer.from('CA'),
        cert: Buffer.from('CERT'),
        key: Buffer.from('KEY'),
        servername: 'api',
        rejectUnauthorized: false,
      },
    });
    file('client.crt', 'RENEWED');
    expect((await kc.credentials()).tls.cert).toEqual(Buffer.from('RENEWED'));
    const inline = load({}, { 'client-certificate-data': b64('C2'), 'client-key-data': b64('K2') });
    expect((await inline.credentials()).tls).toMatchObject({ cert: Buffer.from('C2'), key: Buffer.from('K2') });
  });

  it("sends the token file's token while it can be read, else the inline one; basic for a username", async () => {
    const tokenFile = file('token', 'from-file\n');
    expect((await load({}, { token: 'inline', tokenFile }).credentials()).authorization).toBe('Bearer from-file');
    expect((await load({}, { token: 'inline', tokenFile: join(dir, 'gone') }).credentials()).authorization).toBe(
      'Bearer inline',
    );
    await expect(load({}, { tokenFile: join(dir, 'gone') }).credentials()).rejects.toThrow(
      `user "a": tokenFile ${join(dir, 'gone')}`,
    );
    expect((await load({}, { username: 'ann', password: 'pw' }).credentials()).authorization).toBe(
      `Basic ${b64('ann:pw')}`,
    );
    expect((await load({}, {}).credentials()).authorization).toBeUndefined();
  });
});

describe('exec plugins', () => {
  const API = 'client.authentication.k8s.io/v1';

  /**
   * A plugin that prints a credential whose token counts its runs, valid for `validMs`, with what it was told in
   * KUBERNETES_EXEC_INFO beside it.
   */
  function plugin(validMs: number): { command: string; runs: () => number; info: () => unknown } {
    const runs = join(dir, `runs-${validMs}`);
    const info = join(dir, `info-${validMs}`);
    const command = file(
      `plugin-${validMs}.mjs`,
      [
        '#!/usr/bin/env node',
        "import { existsSync, readFileSync, writeFileSync } from 'node:fs';",
        `const n = (existsSync(${JSON.stringify(runs)}) ? Number(readFileSync(${JSON.stringify(runs)}, 'utf8')) : 0) + 1;`,
        `writeFileSync(${JSON.stringify(runs)}, String(n));`,
        `writeFileSync(${JSON.stringify(info)}, process.env.KUBERNETES_EXEC_INFO + '\\n' + process.env.EXTRA);`,
        `const expirationTimestamp = new Date(Date.now() + ${validMs}).toISOString();`,
        `console.log(JSON.stringify({ apiVersion: '${API}', kind: 'ExecCredential', status: { token: 'run-' + n, expirationTimestamp } }));`,
      ].join('\n'),
    );
    chmodSync(command, 0o755);
    return {
      command,
      runs: () => Number(readFileSync(runs, 'utf8')),
      info: () => {
        const [json, extra] = readFileSync(info, 'utf8').split('\n');
        return { request: JSON.parse(json!), extra };
      },
    };
  }

  const withPlugin = (command: string, exec: object = {}) => {
    const kc = new KubeConfig();
    const user = { exec: { apiVersion: API, command, env: [{ name: 'EXTRA', value: 'given' }], ...exec } };
    kc.loadFromString(stringify(doc('a', { server: 'https://a', 'certificate-authority-data': b64('CA') }, user)), dir);
    return kc;
  };

  it("sends the plugin's token, running it again only once the credential has expired", async () => {
    const lasting = plugin(3_600_000);
    const kc = withPlugin(lasting.command, { provideClusterInfo: true });
    const [one, two] = await Promise.all([kc.credentials(), kc.credentials()]);
    expect([one.authorization, two.authorization]).toEqual(['Bearer run-1', 'Bearer run-1']);
    expect((await kc.credentials()).authorization).toBe('Bearer run-1');
    expect(lasting.runs()).toBe(1);
    expect(lasting.info()).toEqual({
      request: {
        apiVersion: API,
        kind: 'ExecCredential',
        spec: { interactive: false, cluster: { server: 'https://a', 'certificate-authority-data': b64('CA') } },
      },
      extra: 'given',
    });

    const expired = plugin(-1);
    const again = withPlugin(expired.command);
    expect((await again.credentials()).authorization).toBe('Bearer run-1');
    expect((await again.credentials()).authorization).toBe('Bearer run-2');
    expect(expired.info()).toMatchObject({ request: { spec: { interactive: false } } });
  });

  it('refuses interactive mode Always and a version client-go no longer runs, and says why a plugin failed', async () => {
    await expect(
      withPlugin('true', { apiVersion: 'client.authentication.k8s.io/v1alpha1' }).credentials(),
    ).rejects.toThrow('exec plugin true: invalid apiVersion "client.authentication.k8s.io/v1alpha1"');
    await expect(withPlugin('true', { interactiveMode: 'Always' }).credentials()).rejects.toThrow(
      'exec plugin true cannot support interactive mode: standard input is not a terminal',
    );
    await expect(withPlugin(join(dir, 'no-such-plugin')).credentials()).rejects.toThrow(
      `exec plugin ${join(dir, 'no-such-plugin')}: spawn ${join(dir, 'no-such-plugin')} ENOENT`,
    );
  });

  it.each([
    ['not JSON', 'token', 'decoding stdout: Unexpected token'],
    [
      'another version',
      { apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: 't' } },
      'plugin returned version client.authentication.k8s.io/v1beta1',
    ],
    ['no status', { apiVersion: API, kind: 'ExecCredential' }, "exec plugin didn't return a status field"],
    [
      'an empty status',
      { apiVersion: API, kind: 'ExecCredential', status: {} },
      "exec plugin didn't return a token or cert/key pair",
    ],
    [
      'a certificate without its key',
      { apiVersion: API, kind: 'ExecCredential', status: { clientCertificateData: 'C' } },
      'exec plugin returned only certificate or key, not both',
    ],
    [
      'a bad expiry',
      { apiVersion: API, kind: 'ExecCredential', status: { token: 't', expirationTimestamp: 'soon' } },
      'status.expirationTimestamp: "soon" is not a time',
    ],
  ])('refuses output with %s', (_, out, message) => {
    expect(() => parseExecCredential(typeof out === 'string' ? out : JSON.stringify(out), API, 'p')).toThrow(message);
  });

  it('takes a client certificate and key from a plugin', () => {
    const out = { apiVersion: API, kind: 'ExecCredential', status: { clientCertificateData: 'C', clientKeyData: 'K' } };
    expect(parseExecCredential(JSON.stringify(out), API, 'p')).toEqual({
      certPem: 'C',
      keyPem: 'K',
      token: undefined,
      expiresAt: undefined,
    });
  });
});
