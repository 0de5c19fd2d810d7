import { describe, expect, it } from 'vitest';
import { FLAVORS, group, naming } from '../api/naming.ts';
import { ResourceRegistry } from '../api/registry.ts';
import { localAPIServices } from './aggregator.ts';
import { requestAttributes } from './authz/rbac.ts';
import { parseRequest, requestTarget } from './request-info.ts';

describe.each(FLAVORS)('localAPIServices (%s flavor)', (flavor) => {
  const registry = new ResourceRegistry(flavor);
  const n = naming(flavor);
  const services = localAPIServices(registry);
  const byName = new Map(services.map((s) => [s.metadata.name, s]));

  it('registers every served group version once, named <version>.<group>', () => {
    const served = new Set(registry.all.map((rt) => `${rt.version}.${rt.group}`));
    expect(services.map((s) => s.metadata.name).sort()).toEqual([...served].sort());
    expect(byName.get('v1.')?.spec).toEqual({
      group: '',
      version: 'v1',
      groupPriorityMinimum: 18000,
      versionPriority: 1,
    });
    for (const s of services) {
      expect(s.apiVersion).toBe(`${group(n, 'apiregistration')}/v1`);
      expect(s.metadata.labels).toEqual({ [n.labels.autoManaged]: 'true' });
      expect(s.spec?.service).toBeUndefined();
    }
  });

  it.each([
    ['apps', 'v1', 17800, 15],
    ['policy', 'v1', 17100, 15],
    [group(n, 'apiregistration'), 'v1', 18000, 15],
    [group(n, 'certificates'), 'v1', 17300, 15],
    [group(n, 'coordination'), 'v1', 16500, 15],
    [group(n, 'coordination'), 'v1beta1', 16500, 13],
    [group(n, 'discovery'), 'v1', 16200, 15],
  ])('%s/%s has the reference priorities %d/%d', (g, v, groupPriority, versionPriority) => {
    expect(byName.get(`${v}.${g}`)?.spec).toMatchObject({ groupPriorityMinimum: groupPriority, versionPriority });
  });

  it("uses the flavor's label key", () => {
    expect(n.labels.autoManaged).toBe(
      flavor === 'kubernetes' ? 'kube-aggregator.kubernetes.io/automanaged' : 'orch-aggregator.orch.io/automanaged',
    );
  });
});

describe('the request attributes of a proxied path (a group version served elsewhere)', () => {
  const registry = new ResourceRegistry('orch');
  const at = (method: string, target: string) => {
    const { path, query } = requestTarget(target);
    return requestAttributes(parseRequest(registry, method, path, query), method);
  };
  it.each([
    ['GET', '/apis/w.io/v1', { verb: 'get', path: '/apis/w.io/v1' }],
    ['GET', '/apis/w.io/v1/widgets', { verb: 'list', group: 'w.io', resource: 'widgets' }],
    ['GET', '/apis/w.io/v1/widgets?watch=true', { verb: 'watch', group: 'w.io', resource: 'widgets' }],
    ['GET', '/apis/w.io/v1/widgets?watch=True', { verb: 'watch', group: 'w.io', resource: 'widgets' }],
    ['GET', '/apis/w.io/v1/widgets?watch=False', { verb: 'list', group: 'w.io', resource: 'widgets' }],
    [
      'GET',
      '/apis/w.io/v1/watch/namespaces/a/widgets',
      { verb: 'watch', group: 'w.io', resource: 'widgets', namespace: 'a' },
    ],
    [
      'GET',
      '/apis/w.io/v1/namespaces/a/widgets/x',
      { verb: 'get', group: 'w.io', resource: 'widgets', namespace: 'a', name: 'x' },
    ],
    [
      'PUT',
      '/apis/w.io/v1/namespaces/a/widgets/x/status',
      { verb: 'update', group: 'w.io', resource: 'widgets', subresource: 'status', namespace: 'a', name: 'x' },
    ],
    [
      'POST',
      '/apis/w.io/v1/namespaces/a/widgets',
      { verb: 'create', group: 'w.io', resource: 'widgets', namespace: 'a' },
    ],
    ['DELETE', '/apis/w.io/v1/widgets', { verb: 'deletecollection', group: 'w.io', resource: 'widgets' }],
    ['PATCH', '/apis/w.io/v1/widgets/x%3Ay', { verb: 'patch', group: 'w.io', resource: 'widgets', name: 'x:y' }],
    // An empty namespace is no namespace: what the backend is sent, a list across all of them, is authorized.
    ['GET', '/apis/w.io/v1/namespaces//widgets', { verb: 'list', group: 'w.io', resource: 'widgets', namespace: '' }],
    // As sent: a dot segment is a name here, not a step up to the collection.
    [
      'GET',
      '/apis/w.io/v1/namespaces/a/widgets/%2e%2e',
      { verb: 'get', group: 'w.io', resource: 'widgets', namespace: 'a', name: '..' },
    ],
  ])('%s %s', (method, path, expected) => {
    expect(at(method, path)).toEqual(expected);
  });
});
