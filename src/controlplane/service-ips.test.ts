import { describe, expect, it } from 'vitest';
import { allocateServiceIPs, keepAllocatedIPs } from './service-ips.ts';

const none = new Set<string>();
const lowest = (): number => 0;
const highest = (): number => 0.9999999;

describe('allocateServiceIPs', () => {
  it.each([
    [
      'a ClusterIP service gets an IP of the upper band',
      { type: 'ClusterIP', selector: {} },
      lowest,
      { clusterIP: '10.96.1.1', clusterIPs: ['10.96.1.1'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' },
    ],
    [
      'the last IP before the broadcast address at most',
      { type: 'ClusterIP' },
      highest,
      { clusterIP: '10.96.255.254', clusterIPs: ['10.96.255.254'] },
    ],
    [
      'a headless service with a selector: single stack, None',
      { type: 'ClusterIP', clusterIP: 'None', selector: {} },
      lowest,
      { clusterIPs: ['None'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' },
    ],
    [
      'a headless service without a selector: every family',
      { type: 'ClusterIP', clusterIP: 'None' },
      lowest,
      { clusterIPs: ['None'], ipFamilyPolicy: 'RequireDualStack' },
    ],
    ['a chosen IP is kept', { clusterIP: '10.96.0.10' }, lowest, { clusterIPs: ['10.96.0.10'] }],
  ])('%s', (_name, spec: Record<string, unknown>, random, expected) => {
    expect(allocateServiceIPs(spec, none, random)).toEqual([]);
    expect(spec).toMatchObject(expected);
  });

  it('gives an ExternalName service nothing', () => {
    const spec: Record<string, unknown> = { type: 'ExternalName', externalName: 'example.com' };
    expect(allocateServiceIPs(spec, none)).toEqual([]);
    expect(spec).toEqual({ type: 'ExternalName', externalName: 'example.com' });
  });

  it('skips IPs in use', () => {
    const spec: Record<string, unknown> = {};
    allocateServiceIPs(spec, new Set(['10.96.1.1']), () => 0);
    expect(spec.clusterIP).not.toBe('10.96.1.1');
  });

  it.each([
    ['1.2.3.4', 'the provided IP (1.2.3.4) is not in the valid range. The range of valid IPs is 10.96.0.0/16'],
    ['10.96.0.0', 'not in the valid range'],
    ['10.96.0.7', 'provided IP is already allocated'],
  ])('refuses the chosen IP %s', (ip, detail) => {
    const [problem] = allocateServiceIPs({ clusterIP: ip }, new Set(['10.96.0.7']));
    expect(problem.field).toBe('spec.clusterIPs[0]');
    expect(problem.message).toContain(`Invalid value: "${ip}": failed to allocate IP ${ip}: `);
    expect(problem.message).toContain(detail);
  });

  it('says so when the range is full', () => {
    const all = new Set(Array.from({ length: 6 }, (_, i) => `10.0.0.${i + 1}`));
    expect(allocateServiceIPs({}, all, () => 0, '10.0.0.0/29')[0].message).toContain('range is full');
  });
});

describe('keepAllocatedIPs', () => {
  it('keeps what an update leaves out, and what it gives', () => {
    const old = {
      clusterIP: '10.96.3.4',
      clusterIPs: ['10.96.3.4'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
    };
    const next: Record<string, unknown> = { clusterIP: '', ports: [] };
    keepAllocatedIPs(next, old);
    expect(next).toEqual({ ...old, ports: [] });
    const changed: Record<string, unknown> = { type: 'ExternalName' };
    keepAllocatedIPs(changed, old);
    expect(changed).toEqual({ type: 'ExternalName' });
  });
});
