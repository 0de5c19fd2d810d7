/** IP addresses as the bytes that certificates and protocols carry. */
import { isIPv4, isIPv6 } from 'node:net';

/**
 * An address's octets: 4 for IPv4, 16 for IPv6 (`::` expanded, a trailing dotted IPv4 part its last 4); undefined
 * for text that is neither.
 */
export function ipOctets(address: string): Buffer | undefined {
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  if (!isIPv6(address)) return undefined;
  const dotted = /\d+\.\d+\.\d+\.\d+$/.exec(address)?.[0];
  // The dotted part stands for the last two groups.
  const [head, tail] = (dotted ? `${address.slice(0, -dotted.length)}0:0` : address).split('::');
  const words = (part?: string) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const h = words(head);
  const t = words(tail);
  const all = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (dotted) bytes.splice(12, 4, ...dotted.split('.').map(Number));
  return Buffer.from(bytes);
}
