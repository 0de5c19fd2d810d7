/** Sends one corpus request to a substrate and reads its answer: status, the headers compared, and the decoded body. */
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { decodeKubernetesProtobuf, encodeKubernetesProtobuf } from '../../src/controlplane/protobuf/index.ts';
import type { Credentials } from './substrates.ts';

export interface Sent {
  method: string;
  /** Path and query string. */
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Watches end at the server's `timeoutSeconds`; this bounds the wait for that. */
  deadlineMs: number;
  watch: boolean;
}

export interface Answer {
  status: number;
  contentType: string;
  /** The `Warning` headers, in order. */
  warnings: string[];
  /** JSON, YAML and protobuf bodies decoded; anything else as text. */
  body?: unknown;
  /** A watch's events, in order. */
  events?: unknown[];
}

/** The bytes of a request body in the format its Content-Type names. */
export function encodeBody(body: unknown, contentType: string): Buffer {
  if (typeof body === 'string') return Buffer.from(body);
  if (contentType.includes('protobuf')) return Buffer.from(encodeKubernetesProtobuf(body as Record<string, unknown>));
  if (contentType.includes('yaml')) return Buffer.from(toYaml(body));
  return Buffer.from(JSON.stringify(body));
}

function decodeBody(bytes: Buffer, contentType: string): unknown {
  if (bytes.length === 0) return undefined;
  try {
    if (contentType.includes('protobuf')) return decodeKubernetesProtobuf(new Uint8Array(bytes));
    if (contentType.includes('yaml')) return parseYaml(bytes.toString('utf8'));
    if (contentType.includes('json')) return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return { undecodable: (error as Error).message, bytes: bytes.length };
  }
  // Text that is JSON (the OpenAPI v3 index is served as text/plain) is compared as JSON.
  const text = bytes.toString('utf8');
  try {
    return text.startsWith('{') ? JSON.parse(text) : text;
  } catch {
    return text;
  }
}

/** A watch's newline-delimited JSON events; a partial last line (cut by the deadline) is dropped. */
function decodeEvents(bytes: Buffer): unknown[] {
  const events: unknown[] = [];
  for (const line of bytes.toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line));
    } catch {
      events.push({ undecodable: line.slice(0, 200) });
    }
  }
  return events;
}

export function send(server: string, credentials: Credentials, sent: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const req = httpsRequest(`${server}${sent.url}`, {
      method: sent.method,
      ca: credentials.ca,
      cert: credentials.cert,
      key: credentials.key,
      headers: { ...credentials.headers, ...sent.headers },
      agent: false,
    });
    const timer = setTimeout(() => req.destroy(new Error('deadline')), sent.deadlineMs);
    const finish = (status: number, headers: Record<string, string | string[] | undefined>) => {
      clearTimeout(timer);
      const contentType = String(headers['content-type'] ?? '');
      const warning = headers.warning;
      const bytes = Buffer.concat(chunks);
      resolve({
        status,
        contentType,
        warnings: warning === undefined ? [] : Array.isArray(warning) ? warning : [warning],
        ...(sent.watch && status === 200 ? { events: decodeEvents(bytes) } : { body: decodeBody(bytes, contentType) }),
      });
    };
    let response: IncomingMessage | undefined;
    req.on('response', (res) => {
      response = res;
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => finish(res.statusCode ?? 0, res.headers));
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      // A watch cut by the client's deadline: what arrived until then is its answer.
      if (response) finish(response.statusCode ?? 0, response.headers);
      else reject(error);
    });
    req.end(sent.body);
  });
}
