/** The diff:kcm comparison: what normalizing keeps and drops, how arrays pair up, and what is written down. */
import { describe, expect, it } from 'vitest';
import { createSelfSignedCa, issueKeyAndCertificate } from '../../src/pki/certs.ts';
import { differences, normalize } from './compare.ts';
import { writtenDown } from './deliberate.ts';

const ctx = { caNotAfterMs: 0 };

describe('normalize', () => {
  it.each([
    [
      'drops uids and resource versions',
      { metadata: { uid: 'u', resourceVersion: '7', name: 'a' } },
      { metadata: { name: 'a' } },
    ],
    [
      'keeps only whether a time is set',
      { lastTransitionTime: '2026-01-01T00:00:00Z', startTime: '' },
      { lastTransitionTime: '<set>', startTime: '' },
    ],
    [
      'keeps the owner but not its uid',
      { ownerReferences: [{ kind: 'StatefulSet', name: 'web', uid: 'x' }] },
      { ownerReferences: [{ kind: 'StatefulSet', name: 'web' }] },
    ],
    [
      'keeps only the names of disrupted pods',
      { disruptedPods: { 'web-1': 't1', 'web-0': 't0' } },
      { disruptedPods: ['web-0', 'web-1'] },
    ],
    ['hides the random suffix of the token volume', { name: 'kube-api-access-x7k2p' }, { name: 'kube-api-access-*' }],
    ['keeps a name that only looks alike', { name: 'kube-api-access-toolong' }, { name: 'kube-api-access-toolong' }],
    [
      'keeps only whether addresses and the node are set',
      { podIP: '10.0.0.1', nodeName: 'n' },
      { podIP: '<set>', nodeName: '<set>' },
    ],
  ])('%s', (_what, input, expected) => {
    expect(normalize(input, ctx)).toEqual(expected);
  });

  it('decodes an issued certificate to its subject, names, usages and validity length', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const ca = await createSelfSignedCa({ commonName: 'kubernetes', now });
    const leaf = await issueKeyAndCertificate({
      ca,
      subject: { commonName: 'system:node:n1', organizations: ['system:nodes'] },
      usages: ['server auth'],
      dnsNames: ['n1'],
      ipAddresses: ['127.0.0.1'],
      notBefore: now,
      notAfter: new Date(now.getTime() + 3600_000),
    });
    const status = { certificate: Buffer.from(leaf.certPem).toString('base64') };
    const [summary] = (normalize(status, ctx) as { certificate: any[] }).certificate;
    expect(summary).toMatchObject({
      subject: 'O=system:nodes, CN=system:node:n1',
      issuer: 'CN=kubernetes',
      dnsNames: ['n1'],
      ipAddresses: ['127.0.0.1'],
      keyUsages: ['digitalSignature'],
      extendedKeyUsages: ['1.3.6.1.5.5.7.3.1'],
      basicConstraints: { ca: false, critical: true },
      validity: '3600 s',
    });
    const clamped = normalize(status, { caNotAfterMs: now.getTime() + 3600_000 }) as { certificate: any[] };
    expect(clamped.certificate[0].validity).toBe("until the CA's notAfter");
  });
});

describe('differences', () => {
  it.each([
    ['equal values', { a: 1 }, { a: 1 }, []],
    ['a changed leaf, with its path', { s: { n: 1 } }, { s: { n: 2 } }, [{ path: 's.n', kcm: 1, ours: 2 }]],
    [
      'conditions paired by type whatever their order',
      {
        c: [
          { type: 'A', status: 'True' },
          { type: 'B', status: 'False' },
        ],
      },
      {
        c: [
          { type: 'B', status: 'True' },
          { type: 'A', status: 'True' },
        ],
      },
      [{ path: 'c[B].status', kcm: 'False', ours: 'True' }],
    ],
    ['a field only one side has', {}, { x: 1 }, [{ path: 'x', kcm: undefined, ours: 1 }]],
    ['plain arrays by index', { l: [1, 2] }, { l: [1] }, [{ path: 'l[1]', kcm: 2, ours: undefined }]],
  ])('%s', (_what, kcm, ours, expected) => {
    expect(differences(kcm, ours)).toEqual(expected);
  });
});

describe('writtenDown', () => {
  it.each([
    ['our rollout condition, absent from KCM', 'sts-scale end StatefulSet/web status.conditions', undefined, [], true],
    ['a StatefulSet condition KCM has too', 'sts-scale end StatefulSet/web status.conditions', [], [], false],
    ['a rollout event', 'sts-broken end events StatefulSet/web Normal PodNotReady', undefined, ['m'], true],
    [
      'an event KCM records too',
      'sts-scale end events StatefulSet/web Normal SuccessfulCreate',
      undefined,
      ['m'],
      false,
    ],
    [
      'a KCM-only event of a KCM-only race',
      'sts-claims end events StatefulSet/d Warning FailedUpdate',
      ['m'],
      undefined,
      true,
    ],
    ['the same event from ours', 'sts-claims end events StatefulSet/d Warning FailedUpdate', undefined, ['m'], false],
    ['a status field', 'pdb-statefulset end PodDisruptionBudget/a status.currentHealthy', 0, 1, false],
  ])('%s', (_what, where, kcm, ours, expected) => {
    expect(writtenDown(where, kcm, ours) !== undefined).toBe(expected);
  });
});
