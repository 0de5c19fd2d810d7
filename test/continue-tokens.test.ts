/**
 * `continue` tokens cannot widen a list, through the real HTTPS server with real identities: nora may only
 * list nodes, paula may only list pods in team-a. A token taken from the admin's paged list of Secrets, or
 * from another namespace, another selector, or naming a guessed snapshot, is refused with 400 whatever it
 * is made to say; the holder's own paging still works to the end.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient, type RawResponse } from './support/raw-https.ts';

type Token = Record<string, unknown>;
const decode = (token: string): Token => JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
const encode = (t: Token): string => Buffer.from(JSON.stringify(t)).toString('base64url');
const names = (r: RawResponse): string[] => (r.json.items as KubeObject[]).map((o) => o.metadata.name!);

describe('continue tokens', () => {
  let c: TestCluster;
  const raw: Record<string, RawClient> = {};

  const list = (who: string, path: string, params: Record<string, string>) =>
    raw[who].send({ path: `${path}?${new URLSearchParams(params)}` });

  /** A page's token, checked to be there. */
  function tokenOf(r: RawResponse): string {
    expect(r.code, r.body).toBe(200);
    expect(r.json.metadata.continue).toBeTruthy();
    return r.json.metadata.continue;
  }

  /** A refusal that shows none of the admin's Secrets. */
  function refused(r: RawResponse, message: RegExp): void {
    expect(r.code, r.body).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect(r.json.message).toMatch(message);
    expect(r.body).not.toContain('s3cr3t');
  }

  beforeAll(async () => {
    c = await startTestCluster();
    const rbac = group(c.cp.registry.naming, 'rbac.authorization');
    raw.admin = await RawClient.fromKubeconfig(c.kubeconfig);
    for (const name of ['nora', 'paula']) {
      const path = await c.cp.writeIdentityKubeconfig(join(c.dir, `${name}.kubeconfig`), {
        username: name,
        groups: [],
      });
      raw[name] = await RawClient.fromKubeconfig(path);
    }
    const post = async (path: string, body: object) => {
      const r = await raw.admin.send({ method: 'POST', path, body: JSON.stringify(body) });
      expect(r.code, r.body).toBe(201);
    };
    for (const name of ['team-a', 'team-b']) await post('/api/v1/namespaces', { metadata: { name } });
    for (const ns of ['team-a', 'team-b']) {
      for (const name of ['s1', 's2', 's3']) {
        await post(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name }, stringData: { password: 's3cr3t' } });
      }
    }
    for (const name of ['n1', 'n2', 'n3']) await post('/api/v1/nodes', { metadata: { name } });
    for (const [name, app] of [
      ['p1', 'web'],
      ['p2', 'db'],
      ['p3', 'web'],
      ['p4', 'web'],
    ]) {
      await post('/api/v1/namespaces/team-a/pods', {
        metadata: { name, labels: { app } },
        spec: { containers: [{ name: 'c', image: 'img' }] },
      });
    }
    await post(`/apis/${rbac}/v1/clusterroles`, {
      metadata: { name: 'node-lister' },
      rules: [{ verbs: ['list'], apiGroups: [''], resources: ['nodes'] }],
    });
    await post(`/apis/${rbac}/v1/clusterrolebindings`, {
      metadata: { name: 'nora-nodes' },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'node-lister' },
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'nora' }],
    });
    await post(`/apis/${rbac}/v1/namespaces/team-a/roles`, {
      metadata: { name: 'pod-lister' },
      rules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }],
    });
    await post(`/apis/${rbac}/v1/namespaces/team-a/rolebindings`, {
      metadata: { name: 'paula-pods' },
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'pod-lister' },
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'paula' }],
    });
  });

  afterAll(async () => {
    for (const r of Object.values(raw)) r.close();
    await c?.stop();
  });

  it('refuses a token from the admin’s list of Secrets on a list of nodes, however it is rewritten', async () => {
    const secrets = tokenOf(await list('admin', '/api/v1/secrets', { limit: '1' }));
    const nodes = tokenOf(await list('nora', '/api/v1/nodes', { limit: '1' }));
    const forged = { ...decode(secrets), prefix: decode(nodes).prefix, start: '' };
    for (const token of [secrets, encode(forged)]) {
      refused(await list('nora', '/api/v1/nodes', { limit: '50', continue: token }), /^invalid continue token: /);
    }
    // nora's own token still pages through the nodes.
    const rest = await list('nora', '/api/v1/nodes', { limit: '50', continue: nodes });
    expect(rest.code, rest.body).toBe(200);
    expect(rest.json.kind).toBe('NodeList');
    expect(names(rest)).toEqual(['n2', 'n3']);
  });

  it('refuses a token from another namespace’s Secrets on a list of pods', async () => {
    const secrets = tokenOf(await list('admin', '/api/v1/namespaces/team-b/secrets', { limit: '1' }));
    const pods = decode(tokenOf(await list('paula', '/api/v1/namespaces/team-a/pods', { limit: '1' })));
    const forgeries = [
      secrets,
      encode({ ...decode(secrets), prefix: pods.prefix }),
      // A start key climbing out of the request's prefix.
      encode({ ...pods, start: '../../secrets/team-b/s0' }),
      encode({ ...pods, start: '/team-b/s0' }),
    ];
    for (const token of forgeries) {
      refused(await list('paula', '/api/v1/namespaces/team-a/pods', { limit: '50', continue: token }), /continue/);
    }
  });

  it('refuses a token on a list with other selectors than the list it came from', async () => {
    const path = '/api/v1/namespaces/team-a/pods';
    const web = await list('paula', path, { limit: '1', labelSelector: 'app=web' });
    expect(names(web)).toEqual(['p1']);
    const token = tokenOf(web);
    const others: Record<string, string>[] = [
      {},
      { labelSelector: 'app=db' },
      { labelSelector: 'app=web', fieldSelector: 'metadata.name=p2' },
    ];
    for (const other of others) {
      refused(await list('paula', path, { limit: '50', continue: token, ...other }), /selectors/);
    }
    const rest = await list('paula', path, { limit: '50', continue: token, labelSelector: 'app=web' });
    expect(rest.code, rest.body).toBe(200);
    expect(names(rest)).toEqual(['p3', 'p4']);
  });

  it('names snapshots by ids nobody can guess, and refuses a guessed one', async () => {
    const path = '/api/v1/namespaces/team-a/pods';
    const first = decode(tokenOf(await list('paula', path, { limit: '1' })));
    const second = decode(tokenOf(await list('paula', path, { limit: '1' })));
    expect(first.snap).not.toEqual(second.snap);
    expect(typeof first.snap).toBe('string');
    expect(String(first.snap)).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    // A counter-style guess next to one's own id, and the admin's real snapshot id from another list.
    const admins = decode(tokenOf(await list('admin', '/api/v1/secrets', { limit: '1' })));
    for (const snap of [1, Number(first.snap) - 1, `${first.snap}`.slice(1), admins.snap]) {
      refused(await list('paula', path, { limit: '50', continue: encode({ ...first, snap }) }), /continue token/);
    }
    // A well-formed id held by no snapshot reads as one evicted or lost with a restart: 410, and the fresh
    // token it offers names no snapshot and still continues only paula's own list.
    const unknown = encode({ ...first, snap: 'A'.repeat(22) });
    const expired = await list('paula', path, { limit: '50', continue: unknown });
    expect(expired.code, expired.body).toBe(410);
    const fresh = decode(expired.json.metadata.continue);
    expect(fresh).toMatchObject({ prefix: first.prefix, start: first.start });
    expect(fresh.snap).toBeUndefined();
    refused(await list('nora', '/api/v1/nodes', { limit: '50', continue: expired.json.metadata.continue }), /continue/);
  });

  it('pages the admin’s list of Secrets to the end, one at a time', async () => {
    const seen: string[] = [];
    let token = '';
    for (let page = 0; page < 10; page++) {
      const r = await list('admin', '/api/v1/namespaces/team-b/secrets', {
        limit: '1',
        ...(token ? { continue: token } : {}),
      });
      expect(r.code, r.body).toBe(200);
      seen.push(...names(r));
      token = r.json.metadata.continue ?? '';
      if (!token) break;
    }
    expect(seen).toEqual(['s1', 's2', 's3']);
  });
});
