import { describe, expect, it } from 'vitest';
import { naming } from '../../src/api/naming.ts';
import { Flags, parseFlags } from '../../src/cli/flags.ts';
import {
  certificatesConfigFromFlags,
  certificatesFlags,
  type SigningConfig,
  signerFlagFamily,
  signingPlan,
  validateSigningConfig,
} from './config.ts';
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

describe('flags', () => {
  const specs = certificatesFlags();
  const parse = (argv: string[]) => new Flags(specs, parseFlags(specs, argv));

  it('defaults to the embedded cluster CA when no signing file is given', () => {
    const c = certificatesConfigFromFlags(parse([]), { certFile: '/d/ca.crt', keyFile: '/d/ca.key' });
    expect(c.signing).toMatchObject({ certFile: '/d/ca.crt', keyFile: '/d/ca.key', durationMs: DEFAULT_CERT_TTL_MS });
    expect(c.servingApproval).toEqual({ enabled: false, dnsPatterns: [], maxDurationMs: undefined });
  });

  it('keeps explicit per-signer pairs, and the deprecated duration flag', () => {
    const c = certificatesConfigFromFlags(
      parse([
        `--cluster-signing-${n.nodeAgent}-client-cert-file=/c.crt`,
        `--cluster-signing-${n.nodeAgent}-client-key-file=/c.key`,
        '--experimental-cluster-signing-duration=24h',
      ]),
      { certFile: '/d/ca.crt', keyFile: '/d/ca.key' },
    );
    expect(c.signing.certFile).toBeUndefined();
    expect(c.signing.perSigner.apiServerClientNodeAgent).toEqual({ certFile: '/c.crt', keyFile: '/c.key' });
    expect(c.signing.durationMs).toBe(24 * 3600_000);
  });

  it('reads the serving approval flags and rejects bad patterns and bad pairs', () => {
    const c = certificatesConfigFromFlags(
      parse([
        `--${n.nodeAgent}-serving-approval`,
        `--${n.nodeAgent}-serving-approval-dns-pattern=[a-z0-9-]+\\.nodes\\.example\\.test`,
        `--${n.nodeAgent}-serving-approval-max-duration=720h`,
      ]),
    );
    expect(c.servingApproval).toEqual({
      enabled: true,
      dnsPatterns: ['[a-z0-9-]+\\.nodes\\.example\\.test'],
      maxDurationMs: 720 * 3600_000,
    });
    expect(() => certificatesConfigFromFlags(parse([`--${n.nodeAgent}-serving-approval-dns-pattern=(`]))).toThrow(
      /invalid argument/,
    );
    expect(() =>
      certificatesConfigFromFlags(
        parse([
          '--cluster-signing-cert-file=a',
          '--cluster-signing-legacy-unknown-cert-file=b',
          '--cluster-signing-legacy-unknown-key-file=c',
        ]),
      ),
    ).toThrow('at the same time');
  });
});
