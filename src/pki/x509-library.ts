/**
 * @peculiar/x509, loaded on first use. The hand-written readers (der.ts, request.ts, certificate.ts) take the
 * certificates and requests met in practice; the library parses the rest. Loading it, with its ASN.1 schemas,
 * reflect-metadata and tsyringe, cost a tenth of the daemon's start when every start did.
 */
import { webcrypto } from 'node:crypto';

type X509 = typeof import('@peculiar/x509');

let loading: Promise<X509> | undefined;

export function x509Library(): Promise<X509> {
  loading ??= (async () => {
    // The library's decorators read and write metadata through the Reflect API this package adds.
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(webcrypto);
    return x509;
  })();
  return loading;
}
