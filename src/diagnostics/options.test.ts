import { describe, expect, it } from 'vitest';
import { type FlagSpec, Flags, parseFlags } from '../cli/flags.ts';
import { diagnosticsFlags, diagnosticsOptionsFromFlags, flagzValues } from './options.ts';

function parse(specs: FlagSpec[], argv: string[]): Flags {
  return new Flags(specs, parseFlags(specs, argv));
}

describe('diagnostics flags', () => {
  it('default to the reference values', () => {
    const specs = diagnosticsFlags();
    const o = diagnosticsOptionsFromFlags(parse(specs, []));
    expect(o).toEqual({
      server: {
        bindAddress: '0.0.0.0',
        securePort: 10257,
        tlsCertFile: undefined,
        tlsPrivateKeyFile: undefined,
        clientCaFile: undefined,
        alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
      },
      tokenTtlMs: 10_000,
      allowTtlMs: 10_000,
      denyTtlMs: 10_000,
    });
  });

  it('read given values, under the names the caller chose for port and address', () => {
    const names = { securePort: 'diagnostics-port', bindAddress: 'diagnostics-address' };
    const specs = diagnosticsFlags(names);
    expect(specs.map((s) => s.name)).toContain('diagnostics-port');
    const o = diagnosticsOptionsFromFlags(
      parse(specs, [
        '--diagnostics-port=0',
        '--diagnostics-address',
        '127.0.0.1',
        '--client-ca-file=/etc/ca.crt',
        '--tls-cert-file=/a.crt',
        '--tls-private-key-file=/a.key',
        '--authorization-always-allow-paths=/healthz,/metrics*',
        '--authorization-always-allow-paths=/statusz',
        '--authentication-token-webhook-cache-ttl=2m',
        '--authorization-webhook-cache-unauthorized-ttl=30s',
      ]),
      names,
    );
    expect(o.server).toEqual({
      bindAddress: '127.0.0.1',
      securePort: 0,
      tlsCertFile: '/a.crt',
      tlsPrivateKeyFile: '/a.key',
      clientCaFile: '/etc/ca.crt',
      alwaysAllowPaths: ['/healthz', '/metrics*', '/statusz'],
    });
    expect([o.tokenTtlMs, o.allowTtlMs, o.denyTtlMs]).toEqual([120_000, 10_000, 30_000]);
  });
});

describe('flagzValues', () => {
  it('shows every flag with its last given value or its default', () => {
    const specs: FlagSpec[] = [
      { name: 'kubeconfig', type: 'string', section: 's', usage: '' },
      { name: 'v', type: 'int', section: 's', default: '2', usage: '' },
      { name: 'leader-elect', type: 'bool', section: 's', default: 'true', usage: '' },
      { name: 'embedded', type: 'bool', section: 's', usage: '' },
      { name: 'controllers', type: 'stringArray', section: 's', default: '*', usage: '' },
      { name: 'extra', type: 'stringArray', section: 's', usage: '' },
      { name: 'feature-gates', type: 'mapStringBool', section: 's', usage: '' },
    ];
    expect(flagzValues(specs, parse(specs, []))).toEqual({
      kubeconfig: '',
      v: '2',
      'leader-elect': 'true',
      embedded: 'false',
      controllers: '[*]',
      extra: '[]',
      'feature-gates': '',
    });
    const given = parse(specs, [
      '--kubeconfig=/a',
      '--kubeconfig=/b',
      '--v=4',
      '--controllers=a',
      '--controllers=-b',
      '--feature-gates=A=true',
      '--feature-gates=B=false',
    ]);
    expect(flagzValues(specs, given)).toMatchObject({
      kubeconfig: '/b',
      v: '4',
      controllers: '[a,-b]',
      'feature-gates': 'A=true,B=false',
    });
  });
});
