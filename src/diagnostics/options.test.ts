import { describe, expect, it } from 'vitest';
import { type FlagSpec, Flags, parseFlags } from '../cli/flags.ts';
import { flagzValues, reviewCacheFlags, reviewCacheTtls } from './options.ts';

function parse(specs: FlagSpec[], argv: string[]): Flags {
  return new Flags(specs, parseFlags(specs, argv));
}

describe('review cache flags', () => {
  it('default to 10 s and read given durations', () => {
    const specs = reviewCacheFlags();
    expect(reviewCacheTtls(parse(specs, []))).toEqual({ tokenTtlMs: 10_000, allowTtlMs: 10_000, denyTtlMs: 10_000 });
    const given = parse(specs, [
      '--authentication-token-webhook-cache-ttl=2m',
      '--authorization-webhook-cache-unauthorized-ttl=30s',
    ]);
    expect(reviewCacheTtls(given)).toEqual({ tokenTtlMs: 120_000, allowTtlMs: 10_000, denyTtlMs: 30_000 });
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
