/**
 * The control plane works out a connection's client-certificate user once: it refuses TLS renegotiation (as Go's
 * TLS server does), through which a client could otherwise present another certificate on the same connection.
 */
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ storage: 'memory' });
});

afterAll(async () => {
  await cluster.stop();
});

describe('client certificates', () => {
  it('a TLS 1.2 connection cannot renegotiate', { timeout: 30_000 }, async () => {
    const user = cluster.kc.getCurrentUser()!;
    const socket: TLSSocket = connect({
      host: '127.0.0.1',
      port: cluster.cp.port,
      ca: cluster.cp.caPem,
      cert: Buffer.from(user.certData!, 'base64'),
      key: Buffer.from(user.keyData!, 'base64'),
      maxVersion: 'TLSv1.2',
    });
    await new Promise<void>((done, fail) => socket.once('secureConnect', done).once('error', fail));
    expect(socket.authorized).toBe(true);
    let answer = '';
    socket.on('error', () => {});
    // Either the connection is closed, or (renegotiated) the request is answered on it.
    const outcome = new Promise<string>((done) => {
      socket.once('close', () => done('closed'));
      socket.on('data', (chunk) => {
        answer += chunk;
        if (/\r\n\r\n/.test(answer) && !answer.startsWith('HTTP/1.1 400 ')) done('answered');
      });
    });
    socket.renegotiate({}, () => {});
    socket.write('GET /version HTTP/1.1\r\nHost: control-plane\r\n\r\n');
    expect(await outcome).toBe('closed');
    socket.destroy();
  });
});
