/**
 * Kubeconfig files, read as client-go's clientcmd reads them: `--kubeconfig`, else the files `$KUBECONFIG` lists
 * (missing ones skipped; the first to name a cluster, user or context, or to set `current-context`, wins), else
 * `~/.kube/config`, else the in-cluster service account. Paths in a file are relative to its directory.
 *
 * Credentials: a bearer token (`token`, or `tokenFile` read again at each refresh, which wins when readable), basic
 * (`username`/`password`), a client certificate (inline or files), or an exec plugin (exec-credential.ts). The
 * `auth-provider` plugins are refused: client-go has dropped `gcp` and `azure` for exec plugins, and this daemon
 * never carried `oidc`'s refresh.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { parse } from 'yaml';
import { type ExecConfig, ExecCredentials } from './exec-credential.ts';

export type { ExecConfig } from './exec-credential.ts';

export interface Cluster {
  name: string;
  server: string;
  /** Base64 of the CA bundle's PEM, as in the file. */
  caData?: string;
  caFile?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

export interface User {
  name: string;
  token?: string;
  tokenFile?: string;
  /** Base64 of the PEM, as in the file. */
  certData?: string;
  certFile?: string;
  /** Base64 of the PEM, as in the file. */
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
}

export interface Context {
  name: string;
  cluster: string;
  user: string;
  namespace?: string;
}

export interface KubeConfigOptions {
  clusters: Cluster[];
  users: User[];
  contexts: Context[];
  currentContext?: string;
}

/** What a connection to the current cluster presents and trusts. */
export interface TlsSettings {
  ca?: Buffer;
  cert?: Buffer | string;
  key?: Buffer | string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** The current context's TLS settings and the `Authorization` header its user sends, if any. */
export interface Credentials {
  tls: TlsSettings;
  authorization?: string;
  /** When an exec plugin's credential expires (milliseconds since the epoch). */
  expiresAt?: number;
  /** For an exec plugin's credential: drops it (the server refused it), so that the plugin is run again. */
  refused?: () => void;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A kubeconfig that does not say what it must, naming the field (`users[0].user.exec.command`) and the rule. */
class KubeConfigError extends Error {
  constructor(where: string, field: string, rule: string) {
    super(`${where}: ${field}: ${rule}`);
    this.name = 'KubeConfigError';
  }
}

export class KubeConfig {
  clusters: Cluster[] = [];
  users: User[] = [];
  contexts: Context[] = [];
  currentContext = '';
  /** Exec plugins' credentials, by user name: run once, and again only once expired. */
  private readonly execCredentials = new Map<string, ExecCredentials>();

  loadFromOptions(options: KubeConfigOptions): void {
    this.clusters = options.clusters;
    this.users = options.users;
    this.contexts = options.contexts;
    this.currentContext = options.currentContext ?? '';
    this.execCredentials.clear();
  }

  /** One kubeconfig's text; relative paths in it are taken from `dir` (the working directory by default). */
  loadFromString(text: string, dir = process.cwd(), where = 'kubeconfig'): void {
    this.loadFromOptions(parseKubeConfig(text, dir, where));
  }

  loadFromFile(path: string): void {
    this.loadFromString(readFileSync(path, 'utf8'), dirname(resolve(path)), path);
  }

  /** `$KUBECONFIG`'s files merged, else `~/.kube/config`, else the in-cluster service account. */
  loadFromDefault(env = process.env): void {
    const listed = [...new Set((env.KUBECONFIG ?? '').split(delimiter).filter(Boolean))];
    const files = listed.length ? listed : [join(env.HOME ?? homedir(), '.kube', 'config')];
    const loaded: KubeConfigOptions[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      loaded.push(parseKubeConfig(text, dirname(resolve(file)), file));
    }
    if (loaded.length) this.loadFromOptions(mergeKubeConfigs(loaded));
    else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) this.loadFromCluster(SERVICE_ACCOUNT_DIR, env);
    else {
      const looked = listed.length
        ? `none of $KUBECONFIG's files (${listed.join(', ')}) exists`
        : `${files[0]} does not exist`;
      throw new Error(`no kubeconfig: ${looked}, and this is not a pod (KUBERNETES_SERVICE_HOST is not set)`);
    }
  }

  /** The pod's service account: its token file (read again at each refresh) and CA, and the cluster's service. */
  loadFromCluster(dir = SERVICE_ACCOUNT_DIR, env = process.env): void {
    const host = env.KUBERNETES_SERVICE_HOST;
    const port = env.KUBERNETES_SERVICE_PORT;
    if (!host || !port)
      throw new Error('not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
    let namespace: string | undefined;
    try {
      namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim();
    } catch {}
    this.loadFromOptions({
      clusters: [
        {
          name: 'in-cluster',
          server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
          caFile: join(dir, 'ca.crt'),
        },
      ],
      users: [{ name: 'in-cluster', tokenFile: join(dir, 'token') }],
      contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster', namespace }],
      currentContext: 'in-cluster',
    });
  }

  getContextObject(name: string): Context | undefined {
    return this.contexts.find((c) => c.name === name);
  }

  getCurrentCluster(): Cluster | undefined {
    const context = this.getContextObject(this.currentContext);
    return context && this.clusters.find((c) => c.name === context.cluster);
  }

  getCurrentUser(): User | undefined {
    const context = this.getContextObject(this.currentContext);
    return context && this.users.find((u) => u.name === context.user);
  }

  /** The current context's TLS settings and authorization, its files read again (a rotated one shows). */
  async credentials(): Promise<Credentials> {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new Error(`the kubeconfig's current context "${this.currentContext}" names no cluster it has`);
    const user = this.getCurrentUser();
    const tls: TlsSettings = {
      ca: fileOrData(cluster.caFile, cluster.caData),
      rejectUnauthorized: cluster.skipTLSVerify ? false : undefined,
      servername: cluster.tlsServerName,
      cert: fileOrData(user?.certFile, user?.certData),
      key: fileOrData(user?.keyFile, user?.keyData),
    };
    if (!user) return { tls };
    if (user.exec) {
      const plugin = this.execFor(user.name, user.exec, cluster);
      const issued = await plugin.current();
      if (issued.certPem) Object.assign(tls, { cert: issued.certPem, key: issued.keyPem });
      return {
        tls,
        authorization: issued.token ? `Bearer ${issued.token}` : undefined,
        expiresAt: issued.expiresAt,
        refused: () => plugin.forget(issued),
      };
    }
    const token = bearerToken(user);
    if (token) return { tls, authorization: `Bearer ${token}` };
    if (user.username !== undefined || user.password !== undefined) {
      const basic = Buffer.from(`${user.username ?? ''}:${user.password ?? ''}`).toString('base64');
      return { tls, authorization: `Basic ${basic}` };
    }
    return { tls };
  }

  private execFor(userName: string, exec: ExecConfig, cluster: Cluster): ExecCredentials {
    let credentials = this.execCredentials.get(userName);
    if (!credentials) {
      // The plugin is told of the CA by its data, as client-go tells it.
      const caData = cluster.caData ?? (cluster.caFile && readFileSync(cluster.caFile).toString('base64'));
      credentials = new ExecCredentials(exec, { ...cluster, caData });
      this.execCredentials.set(userName, credentials);
    }
    return credentials;
  }
}

function fileOrData(file: string | undefined, data: string | undefined): Buffer | undefined {
  if (data) return Buffer.from(data, 'base64');
  return file ? readFileSync(file) : undefined;
}

/** The token file's, while it can be read (the reference's BearerTokenFile), else the inline one. */
function bearerToken(user: User): string | undefined {
  if (user.tokenFile) {
    try {
      return readFileSync(user.tokenFile, 'utf8').trim();
    } catch (err) {
      if (!user.token) throw new Error(`user "${user.name}": tokenFile ${user.tokenFile}: ${(err as Error).message}`);
    }
  }
  return user.token;
}

/** Several kubeconfigs as one: the first to name an entry, or to set the current context, wins. */
export function mergeKubeConfigs(configs: KubeConfigOptions[]): KubeConfigOptions {
  const firstOfEach = <T extends { name: string }>(lists: T[][]): T[] => {
    const byName = new Map<string, T>();
    for (const entry of lists.flat()) if (!byName.has(entry.name)) byName.set(entry.name, entry);
    return [...byName.values()];
  };
  return {
    clusters: firstOfEach(configs.map((c) => c.clusters)),
    users: firstOfEach(configs.map((c) => c.users)),
    contexts: firstOfEach(configs.map((c) => c.contexts)),
    currentContext: configs.find((c) => c.currentContext)?.currentContext ?? '',
  };
}

/** A kubeconfig's text (YAML or JSON) as options; `dir` is where its relative paths start. */
export function parseKubeConfig(text: string, dir: string, where = 'kubeconfig'): KubeConfigOptions {
  const root = new Mapping(parse(text, { maxAliasCount: 100 }) ?? {}, '', where);
  const local = <T extends string | undefined>(path: T): T => (path && !isAbsolute(path) ? join(dir, path) : path) as T;
  const entries = <T>(list: string, body: string, build: (m: Mapping, name: string) => T): T[] => {
    const names = new Set<string>();
    return root.mappings(list).map((entry) => {
      const name = entry.required('name');
      if (names.has(name)) entry.fail('name', `Duplicate value: "${name}"`);
      names.add(name);
      return build(entry.mapping(body), name);
    });
  };
  const clusters = entries('clusters', 'cluster', (c, name) => ({
    name,
    server: c.required('server'),
    caData: c.string('certificate-authority-data'),
    caFile: local(c.string('certificate-authority')),
    skipTLSVerify: c.boolean('insecure-skip-tls-verify'),
    tlsServerName: c.string('tls-server-name'),
    proxyUrl: c.string('proxy-url'),
  }));
  const users = entries('users', 'user', (u, name): User => {
    if (u.has('auth-provider')) {
      u.fail('auth-provider', 'Unsupported value: auth-provider plugins are not supported; use an exec plugin');
    }
    const user: User = {
      name,
      token: u.string('token'),
      tokenFile: local(u.string('tokenFile')),
      certData: u.string('client-certificate-data'),
      certFile: local(u.string('client-certificate')),
      keyData: u.string('client-key-data'),
      keyFile: local(u.string('client-key')),
      username: u.string('username'),
      password: u.string('password'),
      exec: u.has('exec') ? execConfig(u.mapping('exec'), local) : undefined,
    };
    if ((user.token || user.tokenFile) && (user.username || user.password)) {
      u.fail('', 'Invalid value: a token and a username/password may not both be set');
    }
    return user;
  });
  const contexts = entries('contexts', 'context', (c, name) => ({
    name,
    cluster: c.string('cluster') ?? '',
    user: c.string('user') ?? '',
    namespace: c.string('namespace'),
  }));
  return { clusters, users, contexts, currentContext: root.string('current-context') };
}

function execConfig(e: Mapping, local: (path: string) => string): ExecConfig {
  const command = e.required('command');
  return {
    // Only a path with a separator is relative to the file; a bare name is looked up in $PATH.
    command: command.includes(sep) ? local(command) : command,
    apiVersion: e.required('apiVersion'),
    args: e.strings('args'),
    env: e.mappings('env').map((v) => ({ name: v.required('name'), value: v.string('value') ?? '' })),
    provideClusterInfo: e.boolean('provideClusterInfo') ?? false,
    interactiveMode: e.string('interactiveMode'),
  };
}

/** One mapping of a parsed kubeconfig, its fields read by type, failing with the field's path and the rule. */
class Mapping {
  private readonly fields: Record<string, unknown>;

  constructor(
    value: unknown,
    private readonly at: string,
    private readonly where: string,
  ) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new KubeConfigError(where, at || '(root)', 'Invalid value: must be a mapping');
    }
    this.fields = value as Record<string, unknown>;
  }

  fail(key: string, rule: string): never {
    throw new KubeConfigError(this.where, this.path(key), rule);
  }

  has(key: string): boolean {
    return this.fields[key] !== undefined && this.fields[key] !== null;
  }

  string(key: string): string | undefined {
    return this.typed(key, 'string', 'must be a string');
  }

  required(key: string): string {
    return this.string(key) || this.fail(key, 'Required value');
  }

  boolean(key: string): boolean | undefined {
    return this.typed(key, 'boolean', 'must be true or false');
  }

  /** The mapping under `key` (an empty one when it is absent). */
  mapping(key: string): Mapping {
    return new Mapping(this.fields[key] ?? {}, this.path(key), this.where);
  }

  mappings(key: string): Mapping[] {
    return this.list(key).map((item, i) => new Mapping(item, `${this.path(key)}[${i}]`, this.where));
  }

  strings(key: string): string[] {
    return this.list(key).map((item, i) => {
      if (typeof item !== 'string')
        throw new KubeConfigError(this.where, `${this.path(key)}[${i}]`, 'Invalid value: must be a string');
      return item;
    });
  }

  private list(key: string): unknown[] {
    const v = this.fields[key] ?? [];
    return Array.isArray(v) ? v : this.fail(key, 'Invalid value: must be a list');
  }

  private typed<T>(key: string, type: 'string' | 'boolean', rule: string): T | undefined {
    const v = this.fields[key];
    if (v === undefined || v === null) return undefined;
    return typeof v === type ? (v as T) : this.fail(key, `Invalid value: ${rule}`);
  }

  private path(key: string): string {
    return [this.at, key].filter(Boolean).join('.');
  }
}
