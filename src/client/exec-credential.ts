/**
 * A kubeconfig user's exec plugin (client.authentication.k8s.io): the command is run with
 * `KUBERNETES_EXEC_INFO` describing the request, and prints an ExecCredential whose status holds a token or a
 * client certificate and key. As client-go does, the credential is kept until its `expirationTimestamp` (for the
 * process's life without one) or until the server refuses it (401), and the plugin runs again then. Never
 * interactive: a daemon has no terminal, so `interactiveMode: Always` is refused.
 */
import { execFile } from 'node:child_process';

export interface ExecConfig {
  command: string;
  apiVersion: string;
  args: string[];
  env: { name: string; value: string }[];
  provideClusterInfo: boolean;
  interactiveMode?: string;
}

/** The cluster as the plugin may be told of it (`provideClusterInfo`). */
export interface ExecCluster {
  server: string;
  caData?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

export interface IssuedCredential {
  token?: string;
  certPem?: string;
  keyPem?: string;
  /** Milliseconds since the epoch; undefined: kept for good. */
  expiresAt?: number;
}

/** The versions client-go still runs plugins of. */
const API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];
const INTERACTIVE_MODES = ['Never', 'IfAvailable', 'Always'];
const PLUGIN_TIMEOUT_MS = 60_000;
/** An ExecCredential is a few KiB; a plugin printing more is broken. */
const MAX_OUTPUT_BYTES = 1 << 20;

export class ExecCredentials {
  private issued?: IssuedCredential;
  /** The run in progress, shared by everyone who asks meanwhile. */
  private running?: Promise<IssuedCredential>;

  constructor(
    private readonly config: ExecConfig,
    private readonly cluster: ExecCluster,
  ) {}

  /** The credential the plugin issued last, or a new one when there is none or it has expired. */
  async current(): Promise<IssuedCredential> {
    const issued = this.issued;
    if (issued && (issued.expiresAt === undefined || issued.expiresAt > Date.now())) return issued;
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    this.issued = await this.running;
    return this.issued;
  }

  /** Drops `issued` if it is still the one kept: the next ask runs the plugin again. */
  forget(issued: IssuedCredential): void {
    if (this.issued === issued) this.issued = undefined;
  }

  private async run(): Promise<IssuedCredential> {
    const { command, args, env, apiVersion, provideClusterInfo, interactiveMode } = this.config;
    if (!API_VERSIONS.includes(apiVersion)) {
      throw new Error(`exec plugin ${command}: invalid apiVersion "${apiVersion}" (${API_VERSIONS.join(', ')})`);
    }
    if (interactiveMode !== undefined && !INTERACTIVE_MODES.includes(interactiveMode)) {
      throw new Error(`exec plugin ${command}: unknown interactiveMode "${interactiveMode}"`);
    }
    if (interactiveMode === 'Always') {
      throw new Error(`exec plugin ${command} cannot support interactive mode: standard input is not a terminal`);
    }
    const request = {
      apiVersion,
      kind: 'ExecCredential',
      spec: { interactive: false, ...(provideClusterInfo ? { cluster: clusterInfo(this.cluster) } : {}) },
    };
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        command,
        args,
        {
          env: {
            ...process.env,
            ...Object.fromEntries(env.map((e) => [e.name, e.value])),
            KUBERNETES_EXEC_INFO: JSON.stringify(request),
          },
          timeout: PLUGIN_TIMEOUT_MS,
          maxBuffer: MAX_OUTPUT_BYTES,
        },
        (err, out, stderr) => {
          if (err)
            reject(new Error(`exec plugin ${command}: ${err.message.trim()}${stderr ? `: ${stderr.trim()}` : ''}`));
          else resolve(out);
        },
      );
    });
    return parseExecCredential(stdout, apiVersion, command);
  }
}

function clusterInfo(c: ExecCluster): Record<string, unknown> {
  return {
    server: c.server,
    'certificate-authority-data': c.caData,
    'insecure-skip-tls-verify': c.skipTLSVerify,
    'tls-server-name': c.tlsServerName,
    'proxy-url': c.proxyUrl,
  };
}

/** A plugin's output as a credential, or an error naming what it lacks (client-go's checks and texts). */
export function parseExecCredential(stdout: string, apiVersion: string, command: string): IssuedCredential {
  const fail = (why: string): never => {
    throw new Error(`exec plugin ${command}: ${why}`);
  };
  let out: { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> | null };
  try {
    out = JSON.parse(stdout);
  } catch (err) {
    return fail(`decoding stdout: ${(err as Error).message}`);
  }
  if (typeof out !== 'object' || out === null) return fail('decoding stdout: not an object');
  if (out.kind !== 'ExecCredential') fail(`decoding stdout: kind is ${JSON.stringify(out.kind)}, not ExecCredential`);
  if (out.apiVersion !== apiVersion) {
    fail(`exec plugin is configured to use API version ${apiVersion}, plugin returned version ${out.apiVersion}`);
  }
  const status = out.status;
  if (typeof status !== 'object' || status === null) return fail("exec plugin didn't return a status field");
  const text = (field: string) => {
    const v = status[field];
    if (v !== undefined && v !== null && typeof v !== 'string') fail(`status.${field}: must be a string`);
    return (v as string | null | undefined) || undefined;
  };
  const token = text('token');
  const certPem = text('clientCertificateData');
  const keyPem = text('clientKeyData');
  if (!token && !certPem && !keyPem) fail("exec plugin didn't return a token or cert/key pair");
  if (!certPem !== !keyPem) fail('exec plugin returned only certificate or key, not both');
  const expiry = text('expirationTimestamp');
  const expiresAt = expiry === undefined ? undefined : Date.parse(expiry);
  if (Number.isNaN(expiresAt)) fail(`status.expirationTimestamp: "${expiry}" is not a time`);
  return { token, certPem, keyPem, expiresAt };
}
