import { describe, expect, it } from 'vitest';
import {
  backendTls,
  compareVersions,
  discoveryPath,
  orderAPIServices,
  resolveBackend,
  targetUrl,
  transportErrorText,
} from './apiservice.ts';
import type { Service } from './types/core.ts';
import type { EndpointSlice } from './types/discovery.ts';
import type { APIService } from './types/misc.ts';

describe('compareVersions', () => {
  // [a, b, expected sign]: negative means a is listed first.
  it.each([
    ['v1', 'v1', 0],
    ['v2', 'v1', -1],
    ['v10', 'v2', -1],
    ['v1', 'v1beta1', -1],
    ['v1beta1', 'v1alpha1', -1],
    ['v1beta2', 'v1beta1', -1],
    ['v2beta1', 'v1beta2', -1],
    ['v11beta2', 'v10beta3', -1],
    ['v12alpha1', 'v11alpha2', -1],
    ['v3beta1', 'v12alpha1', -1],
    ['v1alpha1', 'foo1', -1],
    ['foo1', 'foo10', -1],
    ['foo10', 'foo2', -1],
    ['v1alpha', 'v1alpha1', 1], // no minor number: not kube-like
    ['V1', 'v1', 1], // upper case: not kube-like
    ['v01', 'v1', 0], // same parsed numbers
    ['v1beta0', 'v1alpha9', -1],
    ['v1', 'v9223372036854775808', -1], // overflow: not kube-like
    ['v9223372036854775807', 'v1', -1],
    ['a', 'b', -1],
  ])('%s vs %s → %d', (a, b, expected) => {
    expect(Math.sign(compareVersions(a, b))).toBe(expected);
    expect(Math.sign(compareVersions(b, a))).toBe(-expected || 0);
  });

  it('sorts the documented example', () => {
    const order = ['v10', 'v2', 'v1', 'v11beta2', 'v10beta3', 'v3beta1', 'v12alpha1', 'v11alpha2', 'foo1', 'foo10'];
    const shuffled = [...order].reverse();
    expect(shuffled.sort(compareVersions)).toEqual(order);
  });
});

function svc(name: string, group: string, version: string, gpm: number, vp: number): APIService {
  return { metadata: { name }, spec: { group, version, groupPriorityMinimum: gpm, versionPriority: vp } };
}

describe('orderAPIServices', () => {
  it('orders groups by their highest groupPriorityMinimum, then name; versions by priority, then version string', () => {
    const list = [
      svc('v1.b', 'b', 'v1', 100, 10),
      svc('v1.a', 'a', 'v1', 100, 10),
      svc('v1beta1.c', 'c', 'v1beta1', 50, 10),
      svc('v2.c', 'c', 'v2', 200, 1),
      svc('v1.c', 'c', 'v1', 10, 10),
      svc('v1alpha1.a', 'a', 'v1alpha1', 100, 10),
      svc('v1beta1.a', 'a', 'v1beta1', 100, 10),
      svc('v1.', '', 'v1', 18000, 1),
    ];
    const ordered = orderAPIServices(list);
    expect(ordered.map((g) => g.group)).toEqual(['', 'c', 'a', 'b']);
    expect(ordered[1].versions.map((s) => s.spec?.version)).toEqual(['v1', 'v1beta1', 'v2']);
    expect(ordered[2].versions.map((s) => s.spec?.version)).toEqual(['v1', 'v1beta1', 'v1alpha1']);
  });

  it('breaks group ties by object name in byte order', () => {
    const ordered = orderAPIServices([svc('v1.Zed', 'Zed', 'v1', 5, 1), svc('v1.alpha', 'alpha', 'v1', 5, 1)]);
    expect(ordered.map((g) => g.group)).toEqual(['Zed', 'alpha']);
  });
});

const remote = (port?: number): APIService => ({
  metadata: { name: 'v1.metrics.example.com' },
  spec: {
    group: 'metrics.example.com',
    version: 'v1',
    groupPriorityMinimum: 100,
    versionPriority: 10,
    service: { namespace: 'ns', name: 'api', port },
  },
});
const service = (spec: Service['spec']): Service => ({ metadata: { namespace: 'ns', name: 'api' }, spec });
const slice = (ports: EndpointSlice['ports'], endpoints: EndpointSlice['endpoints']): EndpointSlice => ({
  metadata: { namespace: 'ns', name: 'api-abc' },
  addressType: 'IPv4',
  ports,
  endpoints,
});
const https = service({ ports: [{ name: 'https', port: 443 }] });

describe('resolveBackend: the decision table rows 1 to 6', () => {
  it.each<[string, Parameters<typeof resolveBackend>[1], Parameters<typeof resolveBackend>[2], string, string, string]>(
    [
      ['missing service', undefined, [], 'False', 'ServiceNotFound', 'service/api in "ns" is not present'],
      [
        'service lookup error',
        new Error('boom'),
        [],
        'Unknown',
        'ServiceAccessError',
        'service/api in "ns" cannot be checked due to: boom',
      ],
      [
        'no port equal to the APIService port',
        service({ ports: [{ port: 8443 }] }),
        [],
        'False',
        'ServicePortError',
        'service/api in "ns" is not listening on port 443',
      ],
      [
        'endpoint lookup error',
        https,
        new Error('cache gone'),
        'Unknown',
        'EndpointsAccessError',
        'service/api in "ns" cannot be checked due to: cache gone',
      ],
      ['no slices', https, [], 'False', 'EndpointsNotFound', 'cannot find endpointslices for service/api in "ns"'],
      [
        'only unready endpoints',
        https,
        [slice([{ name: 'https', port: 6443 }], [{ addresses: ['10.0.0.1'], conditions: { ready: false } }])],
        'False',
        'MissingEndpoints',
        'endpointslices for service/api in "ns" have no addresses with port name "https"',
      ],
      [
        'a slice with another port name',
        https,
        [slice([{ name: 'http', port: 6443 }], [{ addresses: ['10.0.0.1'] }])],
        'False',
        'MissingEndpoints',
        'endpointslices for service/api in "ns" have no addresses with port name "https"',
      ],
      [
        'a slice port without a number',
        https,
        [slice([{ name: 'https' }], [{ addresses: ['10.0.0.1'] }])],
        'False',
        'MissingEndpoints',
        'endpointslices for service/api in "ns" have no addresses with port name "https"',
      ],
    ],
  )('%s', (_name, svcLookup, slices, status, reason, message) => {
    expect(resolveBackend(remote(), svcLookup, slices)).toEqual({ failure: { status, reason, message } });
  });

  it('targets the ready (or unknown) endpoints on the slice port, across slices', () => {
    const r = resolveBackend(remote(), https, [
      slice(
        [{ name: 'https', port: 6443 }],
        [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'], conditions: { ready: true } }],
      ),
      slice(
        [{ name: 'https', port: 7443 }],
        [{ addresses: ['fd00::1'] }, { addresses: ['10.0.0.9'], conditions: { ready: false } }],
      ),
    ]);
    expect(r).toEqual({
      targets: [
        { host: '10.0.0.1', port: 6443 },
        { host: '10.0.0.2', port: 6443 },
        { host: 'fd00::1', port: 7443 },
      ],
    });
    expect(targetUrl({ host: 'fd00::1', port: 7443 }, '/apis/g/v1')).toBe('https://[fd00::1]:7443/apis/g/v1');
  });

  it('matches the unnamed port and a non-default APIService port', () => {
    const r = resolveBackend(remote(8443), service({ ports: [{ port: 8443 }] }), [
      slice([{ port: 9443 }], [{ addresses: ['10.0.0.3'] }]),
    ]);
    expect(r).toEqual({ targets: [{ host: '10.0.0.3', port: 9443 }] });
  });

  it('skips the service rows for other service types', () => {
    expect(resolveBackend(remote(), service({ type: 'ExternalName', externalName: 'api.example.com' }), [])).toEqual({
      targets: [{ host: 'api.example.com', port: 443 }],
    });
    expect(resolveBackend(remote(), service({ type: 'NodePort', clusterIP: '10.96.0.7', ports: [] }), [])).toEqual({
      targets: [{ host: '10.96.0.7', port: 443 }],
    });
  });
});

describe('discoveryPath and TLS', () => {
  it('uses /api for the core group', () => {
    expect(discoveryPath(svc('v1.', '', 'v1', 1, 1))).toBe('/api/v1');
    expect(discoveryPath(remote())).toBe('/apis/metrics.example.com/v1');
  });

  it('trusts the caBundle, the system roots, or nothing', () => {
    const withCa = { ...remote(), spec: { ...remote().spec!, caBundle: Buffer.from('PEM').toString('base64') } };
    expect(backendTls(withCa)).toEqual({
      rejectUnauthorized: true,
      ca: 'PEM',
      servername: 'api.ns.svc',
      trust: 'spec.caBundle',
    });
    expect(backendTls(remote()).trust).toBe('the system roots');
    expect(backendTls(withCa, false)).toMatchObject({ rejectUnauthorized: false, trust: 'nothing' });
    const insecure = { ...remote(), spec: { ...remote().spec!, insecureSkipTLSVerify: true } };
    expect(backendTls(insecure)).toMatchObject({ rejectUnauthorized: false, trust: 'nothing' });
  });

  it('words certificate failures as x509 errors naming the trust', () => {
    const tls = backendTls(remote());
    expect(transportErrorText(Object.assign(new Error('x'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }), tls)).toBe(
      'x509: certificate signed by unknown authority (verified against the system roots)',
    );
    expect(transportErrorText(Object.assign(new Error('x'), { code: 'CERT_HAS_EXPIRED' }), tls)).toMatch(
      /^x509: certificate has expired/,
    );
    expect(
      transportErrorText(Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID', reason: 'nope' }), tls),
    ).toBe('x509: certificate is not valid for api.ns.svc: nope (verified against the system roots)');
    expect(transportErrorText(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), tls)).toBe(
      'connect ECONNREFUSED',
    );
  });
});
