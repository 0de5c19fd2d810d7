import { describe, expect, it } from 'vitest';
import { naming } from '../../src/api/naming.ts';
import { type SigningConfig, signerFlagFamily, signingPlan, validateSigningConfig } from './config.ts';
import { DEFAULT_CERT_TTL_MS } from './signing/policy.ts';

const n = naming();
const base: SigningConfig = { perSigner: {}, durationMs: DEFAULT_CERT_TTL_MS };

describe('signer start-up rules (reference §3.1)', () => {
  it('skips everything without a complete single pair or any per-signer pair', () => {
    for (const c of [base, { ...base, certFile: 'ca.crt' }, { ...base, keyFile: 'ca.key' }]) {
      const plan = signingPlan(c, n);
      expect(plan.loops).toEqual([]);
      expect(plan.skipped.map((s) => s.signer)).toHaveLength(4);
    }
  });

  it('runs all four loops on the single pair', () => {
    const plan = signingPlan({ ...base, certFile: 'ca.crt', keyFile: 'ca.key' }, n);
    expect(plan.loops.map((l) => l.signer)).toEqual([
      n.signers.nodeAgentServing,
      n.signers.apiServerClientNodeAgent,
      n.signers.apiServerClient,
      n.signers.legacyUnknown,
    ]);
    expect(new Set(plan.loops.map((l) => `${l.certFile}|${l.keyFile}`))).toEqual(new Set(['ca.crt|ca.key']));
  });

  it('refuses the single pair together with a per-signer pair', () => {
    const c = {
      ...base,
      certFile: 'ca.crt',
      keyFile: 'ca.key',
      perSigner: { legacyUnknown: { certFile: 'l.crt', keyFile: 'l.key' } },
    };
    expect(() => signingPlan(c, n)).toThrow('cannot specify default and per controller certs at the same time');
    expect(validateSigningConfig(c)).toContain(
      'cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time',
    );
  });

  it('runs only the signers whose own pair is set', () => {
    const plan = signingPlan(
      { ...base, perSigner: { apiServerClientNodeAgent: { certFile: 'c.crt', keyFile: 'c.key' } } },
      n,
    );
    expect(plan.loops).toEqual([
      {
        key: 'apiServerClientNodeAgent',
        signer: n.signers.apiServerClientNodeAgent,
        certFile: 'c.crt',
        keyFile: 'c.key',
      },
    ]);
    expect(plan.skipped.map((s) => s.signer)).not.toContain(n.signers.apiServerClientNodeAgent);
  });

  it('refuses half a per-signer pair, naming the flag family', () => {
    expect(validateSigningConfig({ ...base, perSigner: { nodeAgentServing: { keyFile: 'k' } } })).toEqual([
      `"cluster-signing-${n.nodeAgent}-serving": cannot specify key without cert`,
    ]);
    expect(validateSigningConfig({ ...base, perSigner: { apiServerClient: { certFile: 'c' } } })).toEqual([
      `"cluster-signing-${n.apiServer}-client": cannot specify cert without key`,
    ]);
    expect(() => signingPlan({ ...base, perSigner: { apiServerClient: { certFile: 'c' } } }, n)).toThrow(
      'cannot specify cert without key',
    );
  });

  it('names the flags with the node agent word in place of kubelet', () => {
    expect(signerFlagFamily('nodeAgentServing')).toBe(`cluster-signing-${n.nodeAgent}-serving`);
    expect(signerFlagFamily('apiServerClientNodeAgent')).toBe(`cluster-signing-${n.nodeAgent}-client`);
    expect(signerFlagFamily('legacyUnknown')).toBe('cluster-signing-legacy-unknown');
  });
});
