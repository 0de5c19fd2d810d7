import { type AddressInfo, createServer } from 'node:net';

/** A TCP port nobody listens on right now on loopback (closed again at once; the caller binds it next). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
