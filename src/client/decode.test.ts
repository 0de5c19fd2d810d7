/**
 * How the client reads what servers send: watch lines cut anywhere by the transport (even inside a
 * character), blank lines, and list pages whose metadata is read before their items.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WatchEvent } from '../api/meta.ts';
import { ResourceRegistry } from '../api/registry.ts';
import { KubeClient } from './client.ts';
import { KubeConfig } from './kubeconfig.ts';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A client of a plain HTTP server that answers every request with `answer`. */
async function clientOf(answer: (res: ServerResponse) => Promise<void>): Promise<KubeClient> {
  server = createServer((_req, res) => void answer(res));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeClient(kc, new ResourceRegistry('orch'), { qps: 0 });
}

const tick = () => new Promise((r) => setTimeout(r, 20));

describe('watch stream decoding', () => {
  it('keeps a character whole when a chunk ends inside it, and skips blank lines', async () => {
    const first = Buffer.from('{"type":"ADDED","object":{"metadata":{"name":"café"}}}\n\n');
    // "é" is two bytes in UTF-8: cut between them.
    const cut = first.indexOf(Buffer.from('é')) + 1;
    const client = await clientOf(async (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      for (const piece of [first.subarray(0, cut), first.subarray(cut), '{"type":"DELETED","object":']) {
        res.write(piece);
        await tick();
      }
      res.end('{"metadata":{"name":"naïve"}}}\n');
    });
    const events: WatchEvent[] = [];
    await client.watch('/api/v1/configmaps', {}, (e) => events.push(e), new AbortController().signal);
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'café'],
      ['DELETED', 'naïve'],
    ]);
  });

  it('rejects with the error when a line mid-stream is not JSON or the consumer throws, and ends the stream', async () => {
    let closed = 0;
    const client = await clientOf(async (res) => {
      res.on('close', () => closed++);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n');
      await tick();
      res.write('{"type":"ADDED","object":{"metadata":{"name":"b"}}}\n{"type":\n');
      // Never ends on its own: the client must be the one to close.
    });
    const names: string[] = [];
    const watch = (onEvent: (e: WatchEvent) => void) =>
      client.watch('/api/v1/configmaps', {}, onEvent, new AbortController().signal);
    await expect(watch((e) => names.push(e.object.metadata.name!))).rejects.toThrow(SyntaxError);
    expect(names).toEqual(['a', 'b']);
    const refused = watch((e) => {
      if (e.object.metadata.name === 'b') throw new Error('refused b');
    });
    await expect(refused).rejects.toThrow('refused b');
    await vi.waitFor(() => expect(closed).toBe(2), { timeout: 10_000 });
  });
});

describe('list pages', () => {
  it.each([
    { where: 'metadata before items', body: '{"kind":"ConfigMapList","metadata":{"continue":"t"},"items":[{"a":1}]}' },
    { where: 'items before metadata', body: '{"kind":"ConfigMapList","items":[{"a":1}],"metadata":{"continue":"t"}}' },
    { where: '"items" inside the head', body: '{"metadata":{"continue":"t","x":{"items":[]}},"items":[{"a":1}]}' },
  ])('reads the continue token and the items with $where', async ({ body }) => {
    const client = await clientOf(async (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
    });
    const page = await client.kind('ConfigMap').listPage('default', { limit: 1 });
    expect(page.metadata.continue).toBe('t');
    expect(page.items()).toEqual([{ a: 1 }]);
  });
});
