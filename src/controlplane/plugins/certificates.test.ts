/**
 * Certificates admission, called directly with a recording access checker: a CSR records its creator's
 * identity whatever the client sent; approving needs `approve`, issuing needs `sign` and a signer-bound
 * ClusterTrustBundle needs `attest`, each on the signer or on its `<domain>/*` wildcard; the API-server
 * client signer refuses a request whose subject names `system:masters`. Run in both naming flavors.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { webcryptoRequest } from '../../../controllers/certificates/testing.ts';
import type { KubeObject } from '../../api/meta.ts';
import { FLAVORS, type FlavorName, group } from '../../api/naming.ts';
import { ResourceRegistry } from '../../api/registry.ts';
import { csrOrganizations } from '../../pki/certs.ts';
import type { AdmissionAttributes, AdmissionPlugin, Operation, UserInfo } from '../admission.ts';
import { ApiError } from '../errors.ts';
import type { AccessCheck } from './authorize.ts';
import { certificatesAdmission } from './certificates.ts';

const SIGNER = 'example.com/widgets';
const ALICE: UserInfo = { username: 'alice', groups: ['approvers', 'system:authenticated'] };

async function rejection(run: () => Promise<unknown> | unknown): Promise<ApiError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the request to be rejected');
}

describe.each(FLAVORS)('certificates admission (%s flavor)', (flavor: FlavorName) => {
  const registry = new ResourceRegistry(flavor);
  const n = registry.naming;
  const certificates = group(n, 'certificates');
  const csrs = registry.resource(certificates, 'v1', 'certificatesigningrequests')!;
  const bundles = registry.resource(certificates, 'v1', 'clustertrustbundles')!;

  /** What the plugin asked, and the `<verb> <signer>` answers that are yes. */
  let asked: AccessCheck[];
  let allowed: Set<string>;
  let plugin: AdmissionPlugin;
  let requestB64: string;

  beforeAll(async () => {
    const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: 'alice', organizations: ['developers'] });
    requestB64 = Buffer.from(pem).toString('base64');
  });

  beforeEach(() => {
    asked = [];
    allowed = new Set();
    plugin = certificatesAdmission(
      n,
      async (_user, check) => {
        asked.push(check);
        return allowed.has(`${check.verb} ${check.name}`);
      },
      csrOrganizations,
    );
  });

  const question = (verb: string, name: string): AccessCheck => ({
    verb,
    group: certificates,
    resource: 'signers',
    name,
  });

  function csr(name: string, spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject {
    return {
      apiVersion: `${certificates}/v1`,
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: requestB64, signerName: SIGNER, usages: ['client auth'], ...spec },
      ...(status ? { status } : {}),
    };
  }

  function bundle(name: string, signerName: string | undefined, metadata: Partial<KubeObject['metadata']> = {}) {
    return {
      apiVersion: `${certificates}/v1`,
      kind: 'ClusterTrustBundle',
      metadata: { name, ...metadata },
      spec: { ...(signerName ? { signerName } : {}), trustBundle: '-----BEGIN CERTIFICATE-----\n...' },
    } as KubeObject;
  }

  function attrs(
    rt: typeof csrs,
    operation: Operation,
    object: KubeObject,
    more: Partial<AdmissionAttributes> = {},
  ): AdmissionAttributes {
    return { operation, rt, name: object.metadata.name ?? '', object, user: ALICE, dryRun: false, ...more };
  }

  async function admitAndValidate(a: AdmissionAttributes): Promise<void> {
    await plugin.admit?.(a);
    await plugin.validate?.(a);
  }

  function expectForbidden(err: ApiError, plural: string, name: string, why: string): void {
    expect(err.code).toBe(403);
    expect(err.reason).toBe('Forbidden');
    expect(err.message).toBe(`${plural}.${certificates} "${name}" is forbidden: ${why}`);
    expect(err.details).toEqual({ name, group: certificates, kind: plural });
  }

  describe('CSR creation records the requester', () => {
    const forged = {
      username: 'root',
      uid: 'forged-uid',
      groups: ['system:masters'],
      extra: { 'forged.example.com': ['yes'] },
    };

    it("fills username, uid, groups and extra from the caller, ignoring the client's", async () => {
      const user: UserInfo = {
        username: `system:node:worker-1`,
        uid: 'uid-42',
        groups: ['system:nodes', 'system:authenticated'],
        extra: { 'scopes.example.com': ['read', 'write'] },
      };
      const obj = csr('node-csr', { ...forged, expirationSeconds: 3600 });
      await admitAndValidate(attrs(csrs, 'CREATE', obj, { user }));
      expect(obj.spec).toEqual({
        request: requestB64,
        signerName: SIGNER,
        usages: ['client auth'],
        expirationSeconds: 3600,
        username: 'system:node:worker-1',
        uid: 'uid-42',
        groups: ['system:nodes', 'system:authenticated'],
        extra: { 'scopes.example.com': ['read', 'write'] },
      });
    });

    it('drops a uid and extra the caller does not have (an empty extra counts as none)', async () => {
      const obj = csr('plain', forged);
      await admitAndValidate(attrs(csrs, 'CREATE', obj, { user: { ...ALICE, extra: {} } }));
      expect(obj.spec).toEqual({
        request: requestB64,
        signerName: SIGNER,
        usages: ['client auth'],
        username: 'alice',
        groups: ['approvers', 'system:authenticated'],
      });
    });

    it('leaves the spec of an update alone', async () => {
      const obj = csr('old', { username: 'bob', groups: ['x'] });
      await admitAndValidate(attrs(csrs, 'UPDATE', obj, { oldObject: structuredClone(obj) }));
      expect(obj.spec).toMatchObject({ username: 'bob', groups: ['x'] });
    });
  });

  describe('approval needs approve on the signer', () => {
    const approve = (old: KubeObject, next = structuredClone(old)) =>
      attrs(csrs, 'UPDATE', next, { subresource: 'approval', oldObject: old });

    it('allows approve on the signer itself', async () => {
      allowed.add(`approve ${SIGNER}`);
      await admitAndValidate(approve(csr('csr-1', {})));
      expect(asked).toEqual([question('approve', SIGNER)]);
    });

    it('allows approve on the <domain>/* wildcard', async () => {
      allowed.add('approve example.com/*');
      await admitAndValidate(approve(csr('csr-1', {})));
      expect(asked).toEqual([question('approve', SIGNER), question('approve', 'example.com/*')]);
    });

    it('refuses without either, naming the signer', async () => {
      allowed.add('sign example.com/*').add('approve other.example.com/*');
      const err = await rejection(() => admitAndValidate(approve(csr('csr-1', {}))));
      expectForbidden(
        err,
        'certificatesigningrequests',
        'csr-1',
        `user not permitted to approve requests with signerName "${SIGNER}"`,
      );
    });

    it('checks the stored signer, not one the request claims', async () => {
      allowed.add('approve example.com/free');
      const old = csr('csr-1', {});
      const next = csr('csr-1', { signerName: 'example.com/free' });
      const err = await rejection(() => admitAndValidate(approve(old, next)));
      expectForbidden(
        err,
        'certificatesigningrequests',
        'csr-1',
        `user not permitted to approve requests with signerName "${SIGNER}"`,
      );
    });

    it('does not ask on a main-resource update', async () => {
      const old = csr('csr-1', {});
      await admitAndValidate(attrs(csrs, 'UPDATE', structuredClone(old), { oldObject: old }));
      expect(asked).toEqual([]);
    });
  });

  describe('issuing needs sign on the signer', () => {
    const issue = (certificate: string | undefined, before?: string) => {
      const old = csr('csr-1', {}, { conditions: [{ type: 'Approved', status: 'True' }], certificate: before });
      const next = csr('csr-1', {}, { conditions: [{ type: 'Approved', status: 'True' }], certificate });
      return attrs(csrs, 'UPDATE', next, { subresource: 'status', oldObject: old });
    };

    it('allows sign on the signer itself or on the wildcard', async () => {
      allowed.add(`sign ${SIGNER}`);
      await admitAndValidate(issue('Y2VydA=='));
      allowed.clear();
      allowed.add('sign example.com/*');
      await admitAndValidate(issue('Y2VydA=='));
      expect(asked).toEqual([question('sign', SIGNER), question('sign', SIGNER), question('sign', 'example.com/*')]);
    });

    it('refuses a new certificate without either, naming the signer', async () => {
      allowed.add(`approve ${SIGNER}`);
      const err = await rejection(() => admitAndValidate(issue('Y2VydA==')));
      expectForbidden(
        err,
        'certificatesigningrequests',
        'csr-1',
        `user not permitted to sign requests with signerName "${SIGNER}"`,
      );
    });

    it('does not ask when the certificate does not change', async () => {
      await admitAndValidate(issue(undefined));
      await admitAndValidate(issue('Y2VydA==', 'Y2VydA=='));
      expect(asked).toEqual([]);
    });
  });

  describe('a signer-bound ClusterTrustBundle needs attest', () => {
    const NAME = 'example.com:widgets:one';

    it('allows attest on the signer itself or on the wildcard', async () => {
      allowed.add(`attest ${SIGNER}`);
      await admitAndValidate(attrs(bundles, 'CREATE', bundle(NAME, SIGNER)));
      allowed.clear();
      allowed.add('attest example.com/*');
      await admitAndValidate(attrs(bundles, 'CREATE', bundle(NAME, SIGNER)));
    });

    it('refuses a creation without attest, naming the signer', async () => {
      allowed.add(`sign ${SIGNER}`);
      const err = await rejection(() => admitAndValidate(attrs(bundles, 'CREATE', bundle(NAME, SIGNER))));
      expectForbidden(err, 'clustertrustbundles', NAME, `user not permitted to attest for signerName "${SIGNER}"`);
    });

    it('asks nothing for a bundle without a signer', async () => {
      await admitAndValidate(attrs(bundles, 'CREATE', bundle('plain', undefined)));
      expect(asked).toEqual([]);
    });

    it('refuses an update that changes more than garbage-collection fields', async () => {
      const old = bundle(NAME, SIGNER, { resourceVersion: '7' });
      const next = bundle(NAME, SIGNER, { resourceVersion: '7', labels: { team: 'blue' } });
      const err = await rejection(() => admitAndValidate(attrs(bundles, 'UPDATE', next, { oldObject: old })));
      expectForbidden(err, 'clustertrustbundles', NAME, `user not permitted to attest for signerName "${SIGNER}"`);
    });

    it('asks nothing for an update of owner references and finalizers only', async () => {
      const old = bundle(NAME, SIGNER, { resourceVersion: '7' });
      const next = bundle(NAME, SIGNER, {
        resourceVersion: '7',
        finalizers: ['example.com/keep'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-1' }],
      });
      await admitAndValidate(attrs(bundles, 'UPDATE', next, { oldObject: old }));
      expect(asked).toEqual([]);
    });
  });

  describe(`the API-server client signer refuses system:masters`, () => {
    const withSubject = async (organizations: string[], signerName: string) => {
      const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: 'mallory', organizations });
      return csr('escalate', { request: Buffer.from(pem).toString('base64'), signerName });
    };

    it('refuses system:masters among the subject organizations', async () => {
      const obj = await withSubject(['developers', 'system:masters'], n.signers.apiServerClient);
      const err = await rejection(() => admitAndValidate(attrs(csrs, 'CREATE', obj)));
      expectForbidden(
        err,
        'certificatesigningrequests',
        'escalate',
        `use of ${n.signers.apiServerClient} signer with system:masters group is not allowed`,
      );
    });

    it('allows other organizations with that signer', async () => {
      await admitAndValidate(attrs(csrs, 'CREATE', await withSubject(['developers'], n.signers.apiServerClient)));
    });

    it('allows system:masters with other signers', async () => {
      const nodeClient = await withSubject(['system:masters'], n.signers.apiServerClientNodeAgent);
      await admitAndValidate(attrs(csrs, 'CREATE', nodeClient));
      await admitAndValidate(attrs(csrs, 'CREATE', await withSubject(['system:masters'], SIGNER)));
    });
  });
});
