/** Node client CSRs' PEMs, made before a measurement so that making them is not measured. */
import { webcryptoRequestWithKeys } from '../../controllers/certificates/testing.ts';
import { generateKeyPair } from '../../src/pki/keys.ts';

export async function nodeClientRequestPems(n: number, tag: string): Promise<string[]> {
  const keys = await generateKeyPair('ECDSA-P256');
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const spec = { organizations: ['system:nodes'], commonName: `system:node:${tag}-${i}` };
    out.push((await webcryptoRequestWithKeys(keys, spec)).pem);
  }
  return out;
}
