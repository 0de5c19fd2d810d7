/**
 * One HTTPS request to a test cluster exactly as written: the path goes on the wire unchanged (no dot-segment
 * normalisation, no re-encoding), with any headers and body, authenticated by a kubeconfig's credentials.
 */
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

export interface RawRequest {
  method?: string;
  /** Sent verbatim, e.g. `/api/v1/namespaces/../secrets`. */
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  timeoutMs?: number;
  /** Resolve on the response headers of a success, without reading its body (a watch stream never ends). */
  headersOnly?: boolean;
}

export interface RawResponse {
  code: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body's bytes (a protobuf answer is no UTF-8). */
  bytes?: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  json?: any;
}

/** Sends requests as the identity of one kubeconfig file. */
export class RawClient {
  /** Kept-alive connections: thousands of requests need not each pay for a TLS handshake. */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });

  private constructor(
    private readonly server: URL,
    private readonly tls: RequestOptions,
  ) {}

  /** No credentials at all, trusting any server certificate. */
  static anonymous(server: string): RawClient {
    return new RawClient(new URL(server), { rejectUnauthorized: false });
  }

  /** The same credentials sent to another server, with TLS options changed (e.g. a self-signed server). */
  at(server: string, tls: RequestOptions): RawClient {
    return new RawClient(new URL(server), { ...this.tls, ...tls });
  }

  close(): void {
    this.agent.destroy();
  }

  static async fromKubeconfig(path: string): Promise<RawClient> {
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    const tls: RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    return new RawClient(new URL(kc.getCurrentCluster()!.server), tls);
  }

  /** A POST of JSON text (a value is sent as its JSON). */
  postJson(path: string, body: unknown): Promise<RawResponse> {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return this.send({ method: 'POST', path, headers: { 'Content-Type': 'application/json' }, body: text });
  }

  /**
   * A request with a JSON body (a value sent as its JSON, none when undefined) asking for JSON back, as `userAgent`
   * (the field manager the server names after it).
   */
  sendJson(
    method: string,
    path: string,
    body: unknown,
    { contentType = 'application/json', userAgent }: { contentType?: string; userAgent: string },
  ): Promise<RawResponse> {
    return this.send({
      method,
      path,
      headers: { 'Content-Type': contentType, Accept: 'application/json', 'User-Agent': userAgent },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  send(r: RawRequest): Promise<RawResponse> {
    const timeoutMs = r.timeoutMs ?? 20_000;
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          ...this.tls,
          headers: {
            ...(this.tls.headers ?? {}),
            ...(r.headers ?? {}),
            // Node's client sends a GET or DELETE body without framing unless told its length.
            ...(r.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(r.body)) }),
          },
          host: this.server.hostname,
          port: this.server.port,
          method: r.method ?? 'GET',
          path: r.path,
          agent: this.agent,
        },
        (res) => {
          if (r.headersOnly && (res.statusCode ?? 0) < 400) {
            res.destroy();
            resolve({ code: res.statusCode ?? 0, headers: res.headers, body: '' });
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const bytes = Buffer.concat(chunks);
            const body = bytes.toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(body);
            } catch {
              json = undefined;
            }
            resolve({ code: res.statusCode ?? 0, headers: res.headers, body, bytes, json });
          });
          res.on('error', reject);
        },
      );
      req.setTimeout(timeoutMs, () =>
        req.destroy(new Error(`${r.method ?? 'GET'} ${r.path}: no answer in ${timeoutMs} ms`)),
      );
      req.on('error', reject);
      req.end(r.body);
    });
  }
}
