import { describe, expect, it } from 'vitest';
import { ResourceRegistry } from '../api/registry.ts';
import { UnknownProtobufField } from './protobuf/decode.ts';
import { ResourceClient } from './resource.ts';
import type { RequestOptions, Transport } from './transport.ts';

describe('ResourceClient.watch', () => {
  const registry = new ResourceRegistry('kubernetes');
  const signal = new AbortController().signal;

  /** A transport whose watches end at once, each recorded; the first protobuf one fails as a newer server's would. */
  function newerServer() {
    const watches: { query: RequestOptions['query']; protobuf: boolean }[] = [];
    const transport: Transport = {
      request: () => Promise.reject(new Error('no requests here')),
      async watch(_path, query, _onEvent, _signal, _caller, protobuf = false) {
        watches.push({ query, protobuf });
        if (protobuf && watches.filter((w) => w.protobuf).length === 1) {
          throw new UnknownProtobufField('core/v1.PodSpec: no field 99');
        }
      },
    };
    return { transport, watches };
  }

  it('asks for protobuf when managedFields are not wanted, until the server sends a field the tables lack', async () => {
    const { transport, watches } = newerServer();
    const pods = new ResourceClient(transport, registry.byKind('Pod')!);
    await pods.watch('ns', { allowWatchBookmarks: true }, () => {}, signal);
    await expect(pods.watch('ns', { withoutManagedFields: true }, () => {}, signal)).rejects.toThrow(
      UnknownProtobufField,
    );
    await pods.watch('ns', { withoutManagedFields: true }, () => {}, signal);
    expect(watches.map((w) => w.protobuf)).toEqual([false, true, false]);
    // The option is the client's, not a query parameter.
    expect(watches.map((w) => w.query)).toEqual([{ allowWatchBookmarks: true }, {}, {}]);
  });

  it('asks for JSON for a kind without protobuf tables', async () => {
    const { transport, watches } = newerServer();
    await new ResourceClient(transport, registry.byKind('Lease')!).watch(
      'ns',
      { withoutManagedFields: true },
      () => {},
      signal,
    );
    expect(watches.map((w) => w.protobuf)).toEqual([false]);
  });
});
