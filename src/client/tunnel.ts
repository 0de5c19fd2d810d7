/**
 * The tunnels a kubeconfig's `proxy-url` names, as client-go dials them: HTTP CONNECT through an `http://` or
 * `https://` proxy (its user and password, if any, as basic Proxy-Authorization), or SOCKS5 through a `socks5://`
 * one (RFC 1928, with RFC 1929's username and password when the URL has them; the server's name resolved by the
 * proxy). The connections then run TLS, and HTTP/2 when offered, over the tunnel as over a direct socket.
 */
import { once } from 'node:events';
import { connect as connectTcp, isIPv6, type Socket } from 'node:net';
import { connect as connectTls, TLSSocket } from 'node:tls';
import { ipOctets } from '../util/ip.ts';

/** Opens a byte stream to `host:port`. */
export type Tunnel = (host: string, port: number, timeoutMs: number) => Promise<Socket>;

/** An HTTP CONNECT answer's head is a few hundred bytes. */
const MAX_CONNECT_HEAD_BYTES = 16 << 10;

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'socks5:': 1080 };

/** A tunnel through the proxy at `proxyUrl`, which `setting` (named in errors) gave. */
export function tunnelThrough(proxyUrl: string, setting = 'proxy-url'): Tunnel {
  const proxy = new URL(proxyUrl);
  const handshake =
    proxy.protocol === 'socks5:' ? socks5Connect : DEFAULT_PORTS[proxy.protocol] ? httpConnect : undefined;
  if (!handshake) {
    throw new Error(`${setting} ${proxyUrl}: unsupported scheme ${proxy.protocol.slice(0, -1)} (http, https, socks5)`);
  }
  return (host, port, timeoutMs) => bounded(openProxy(proxy), timeoutMs, (s) => handshake(s, proxy, host, port));
}

function openProxy(proxy: URL): Socket {
  const host = proxy.hostname.replace(/^\[|\]$/g, '');
  const port = Number(proxy.port || DEFAULT_PORTS[proxy.protocol]);
  return proxy.protocol === 'https:' ? connectTls({ host, port }) : connectTcp({ host, port });
}

/** The tunnel made on `socket` within `timeoutMs`, else the socket destroyed and an error. */
async function bounded(socket: Socket, timeoutMs: number, handshake: (s: Socket) => Promise<void>): Promise<Socket> {
  const timer = setTimeout(
    () => socket.destroy(new Error(`proxy did not open a tunnel within ${timeoutMs} ms`)),
    timeoutMs,
  );
  try {
    await once(socket, socket instanceof TLSSocket ? 'secureConnect' : 'connect');
    await handshake(socket);
    return socket;
  } catch (err) {
    socket.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Exactly `n` bytes from the socket, waiting for them; an error when it ends first. */
async function readExactly(socket: Socket, n: number): Promise<Buffer> {
  for (;;) {
    const chunk: Buffer | null = socket.read(n);
    if (chunk?.length === n) return chunk;
    // At its end a stream hands over what is left (fewer bytes), then nothing.
    if (chunk || socket.readableEnded) throw new Error('proxy closed the connection during its handshake');
    const settled = new AbortController();
    await Promise.race([once(socket, 'readable', settled), once(socket, 'end', settled)]).finally(() =>
      settled.abort(),
    );
  }
}

async function httpConnect(socket: Socket, proxy: URL, host: string, port: number): Promise<void> {
  const target = `${isIPv6(host) ? `[${host}]` : host}:${port}`;
  const auth = proxy.username
    ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}\r\n`
    : '';
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
  // Byte by byte up to the head's end, so that no byte of the tunnel is read here.
  let head = '';
  while (!head.endsWith('\r\n\r\n')) {
    if (head.length >= MAX_CONNECT_HEAD_BYTES)
      throw new Error(`proxy's answer to CONNECT exceeds ${MAX_CONNECT_HEAD_BYTES} bytes`);
    head += (await readExactly(socket, 1)).toString('latin1');
  }
  const status = head.slice(0, head.indexOf('\r\n'));
  if (!/^HTTP\/1\.[01] 200 /.test(`${status} `)) throw new Error(`proxy refused CONNECT ${target}: ${status}`);
}

/** RFC 1928 reply codes. */
const SOCKS5_REPLIES = [
  'succeeded',
  'general SOCKS server failure',
  'connection not allowed by ruleset',
  'network unreachable',
  'host unreachable',
  'connection refused',
  'TTL expired',
  'command not supported',
  'address type not supported',
];

async function socks5Connect(socket: Socket, proxy: URL, host: string, port: number): Promise<void> {
  const user = decodeURIComponent(proxy.username);
  const password = decodeURIComponent(proxy.password);
  // No authentication, and username/password when the URL has them.
  socket.write(Buffer.from(user ? [5, 2, 0, 2] : [5, 1, 0]));
  const [, method] = await readExactly(socket, 2);
  if (method === 2 && user) {
    const u = Buffer.from(user);
    const p = Buffer.from(password);
    if (u.length > 255 || p.length > 255) throw new Error('SOCKS5 proxy: username and password are at most 255 bytes');
    socket.write(Buffer.concat([Buffer.from([1, u.length]), u, Buffer.from([p.length]), p]));
    if ((await readExactly(socket, 2))[1] !== 0)
      throw new Error('SOCKS5 proxy: username/password authentication failed');
  } else if (method !== 0) {
    throw new Error('SOCKS5 proxy: no acceptable authentication method');
  }
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), socksAddress(host), Buffer.from([port >> 8, port & 0xff])]));
  const [, reply, , type] = await readExactly(socket, 4);
  if (reply !== 0)
    throw new Error(`SOCKS5 proxy: ${SOCKS5_REPLIES[reply!] ?? `reply ${reply}`} (connecting to ${host}:${port})`);
  // The bound address and port, unused.
  const length = type === 1 ? 4 : type === 4 ? 16 : (await readExactly(socket, 1))[0]!;
  await readExactly(socket, length + 2);
}

function socksAddress(host: string): Buffer {
  const ip = ipOctets(host);
  // Address types: 1 IPv4, 4 IPv6, 3 a domain name.
  if (ip) return Buffer.concat([Buffer.from([ip.length === 4 ? 1 : 4]), ip]);
  const name = Buffer.from(host);
  if (name.length > 255) throw new Error(`SOCKS5 proxy: host name ${host} is longer than 255 bytes`);
  return Buffer.concat([Buffer.from([3, name.length]), name]);
}
