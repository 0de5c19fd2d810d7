/**
 * `--use-service-account-credentials` end to end on both substrates: the daemon (its own identity the shipped RBAC's
 * ServiceAccount) requests a token of `certificate-controller` in the system namespace, creating the account, and
 * a node agent's CSR is approved and issued by writes the API server attributes to that account; the informers
 * keep the daemon's own identity; a StatefulSet's status and its claims' owners are written, by updates (the
 * reference's role grants no patch of either), as `statefulset-controller`; and the controllers meet no forbidden request (the suite's last test), so the
 * plane's bootstrap `system:controller:certificate-controller` role covers what they do.
 */
import { beforeAll, expect, it } from 'vitest';
import { CONTROLLER_ACCOUNTS } from '../../src/api/controller-accounts.ts';
import type { StatefulSet } from '../../src/api/types/apps.ts';
import type { CertificateSigningRequest } from '../../src/api/types/certificates.ts';
import type { PersistentVolumeClaim } from '../../src/api/types/core.ts';
import type { AuditEvent } from '../../src/controlplane/audit.ts';
import { identityOf } from '../support/audit-log.ts';
import { eventually } from '../support/eventually.ts';
import { statefulSet, waitForSet } from '../support/statefulsets.ts';
import { describeOnSubstrate, type SubstrateDaemon } from '../support/substrate.ts';

describeOnSubstrate('sacreds', (s) => {
  let daemon: SubstrateDaemon;
  const accountOf = (name: string) => `system:serviceaccount:${s().naming.systemNamespace}:${name}`;
  const account = () => accountOf(CONTROLLER_ACCOUNTS.certificates);

  beforeAll(async () => {
    daemon = await s().startDaemon({
      controllers: 'csrapproving,csrsigning,statefulset',
      args: ['--use-service-account-credentials=true'],
    });
  }, 90_000);

  /** The writes this suite's daemon made (its identity in the user agent), whoever it authenticated as. */
  const ours = async (): Promise<AuditEvent[]> =>
    (await s().writes()).filter((e) => identityOf(e) === daemon.proc.identity);

  it("approves and issues a node agent's CSR as the certificate controller's service account", async () => {
    const node = s().nodeAgent(s().name('worker'), await s().bootstrapToken());
    const outcome = await node.bootstrap();
    expect(outcome.issued).toBe(true);
    if (!outcome.issued) return;
    const name = outcome.credentials.csrName;
    const csr = await s().admin.kind<CertificateSigningRequest>('CertificateSigningRequest').get(undefined, name);
    expect(csr.status?.conditions?.map((c) => [c.type, c.status])).toEqual([['Approved', 'True']]);
    expect(csr.status?.certificate).toBeTruthy();

    const writes = await ours();
    const onCsr = writes.filter(
      (e) => e.objectRef.resource === 'certificatesigningrequests' && e.objectRef.name === name,
    );
    expect(onCsr.map((e) => [e.verb, e.objectRef.subresource, e.responseStatus.code, e.user.username])).toEqual([
      ['update', 'approval', 200, account()],
      ['update', 'status', 200, account()],
    ]);
    // Its user agent names the account too, as the reference's does.
    for (const e of onCsr) expect(e.userAgent).toMatch(new RegExp(`/${account()}$`));
    // Tokens are asked for with the daemon's own credentials, never with an account's. The StatefulSet controller
    // may have asked for its own already (sets another suite left on the cluster). An account not there yet
    // answers 404, and is then created.
    const tokens = writes.filter(
      (e) => e.objectRef.resource === 'serviceaccounts' && e.objectRef.subresource === 'token',
    );
    for (const e of tokens) {
      expect(e.objectRef.namespace).toBe(s().naming.systemNamespace);
      expect(e.user.username).not.toBe(accountOf(e.objectRef.name ?? ''));
      expect([201, 404]).toContain(e.responseStatus.code);
    }
    // One token serves both controllers of the account (and every request until it is renewed).
    const certificates = tokens.filter((e) => e.objectRef.name === CONTROLLER_ACCOUNTS.certificates);
    expect(certificates.filter((e) => e.responseStatus.code === 201)).toHaveLength(1);
    const sa = await s().admin.kind('ServiceAccount').get(s().naming.systemNamespace, CONTROLLER_ACCOUNTS.certificates);
    expect(sa.metadata.name).toBe(CONTROLLER_ACCOUNTS.certificates);
  });

  it("writes a StatefulSet's status and its claims' owners as the statefulset controller's account, by updates", async () => {
    const ns = await s().namespace('sts');
    const sets = s().admin.kind<StatefulSet>('StatefulSet');
    const claimTemplate = {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    };
    const set = statefulSet(ns, 'db', 1, {
      podManagementPolicy: 'Parallel',
      volumeClaimTemplates: [claimTemplate],
    } as Partial<StatefulSet['spec']>);
    set.spec.template.spec!.containers[0]!.volumeMounts = [{ name: 'data', mountPath: '/data' }];
    await sets.create(set);
    const claims = s().admin.kind<PersistentVolumeClaim>('PersistentVolumeClaim');
    await eventually(
      () => claims.get(ns, 'data-db-0').catch(() => undefined),
      30_000,
      () => `the claim; daemon log:\n${daemon.log()}`,
    );
    await waitForSet(sets, ns, 'db', (x) => x.status?.replicas === 1, 'its pod counted');
    // Now the claims go with the set: the controller adds the set as their owner.
    await sets.patch(
      ns,
      'db',
      { spec: { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } } },
      'merge',
    );
    await eventually(
      async () =>
        (await claims.get(ns, 'data-db-0')).metadata.ownerReferences?.some((r) => r.kind === 'StatefulSet')
          ? true
          : undefined,
      30_000,
      () => `the claim's owner; daemon log:\n${daemon.log()}`,
    );
    const writes = (await ours()).filter((e) => e.objectRef.namespace === ns);
    const by = (resource: string, subresource?: string) =>
      writes.filter((e) => e.objectRef.resource === resource && e.objectRef.subresource === subresource);
    const sts = accountOf(CONTROLLER_ACCOUNTS.statefulSet);
    expect(by('statefulsets', 'status').length).toBeGreaterThan(0);
    for (const e of by('statefulsets', 'status'))
      expect([e.verb, e.user.username, e.responseStatus.code]).toEqual(['update', sts, 200]);
    const onClaim = by('persistentvolumeclaims').filter((e) => e.objectRef.name === 'data-db-0');
    // Created, then updated (once, or again from a cache that had not seen the first update yet: a 409).
    for (const e of onClaim) expect([e.verb, e.user.username]).toEqual([e === onClaim[0] ? 'create' : 'update', sts]);
    expect(onClaim.map((e) => e.responseStatus.code)).toContain(200);
    expect(onClaim[0]?.responseStatus.code).toBe(201);
    // Its events (the pod's and the claim's creation) go with its account too, as the reference records them.
    const events = by('events');
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect([e.verb, e.user.username, e.responseStatus.code]).toEqual(['create', sts, 201]);
  }, 90_000);
});
