import { describe, expect, it } from 'vitest';
import { group, naming } from '../../api/naming.ts';
import { readEnvelope } from '../protobuf/envelope.ts';
import { decodeMessage, type MessageTable } from '../protobuf/schema.ts';
import { tableForKind } from '../protobuf/tables.ts';

// Bodies kubectl v1.32 posted (Content-Type application/vnd.kubernetes.protobuf), captured verbatim, for:
const CAPTURED = {
  // kubectl auth can-i list pods -n team-a
  ssarResource:
    'azhzAAoyChdhdXRob3JpemF0aW9uLms4cy5pby92MRIXU2VsZlN1YmplY3RBY2Nlc3NSZXZpZXcSPAoQCgASABoAIgAqADIAOABCABIeChwKBnRlYW0tYRIEbGlzdBoAIgAqBHBvZHMyADoAGggIABIAGgAgABoAIgA=',
  // kubectl auth can-i get pods/web --subresource=log -n team-a
  ssarSubresource:
    'azhzAAoyChdhdXRob3JpemF0aW9uLms4cy5pby92MRIXU2VsZlN1YmplY3RBY2Nlc3NSZXZpZXcSQQoQCgASABoAIgAqADIAOABCABIjCiEKBnRlYW0tYRIDZ2V0GgAiACoEcG9kczIDbG9nOgN3ZWIaCAgAEgAaACAAGgAiAA==',
  // kubectl auth can-i get /healthz
  ssarNonResource:
    'azhzAAoyChdhdXRob3JpemF0aW9uLms4cy5pby92MRIXU2VsZlN1YmplY3RBY2Nlc3NSZXZpZXcSLwoQCgASABoAIgAqADIAOABCABIREg8KCC9oZWFsdGh6EgNnZXQaCAgAEgAaACAAGgAiAA==',
  // kubectl auth can-i --list -n team-a
  ssrr: 'azhzAAoxChdhdXRob3JpemF0aW9uLms4cy5pby92MRIWU2VsZlN1YmplY3RSdWxlc1JldmlldxIiChAKABIAGgAiACoAMgA4AEIAEggKBnRlYW0tYRoEGAAiABoAIgA=',
  // kubectl auth whoami
  ssr: 'azhzAAotChhhdXRoZW50aWNhdGlvbi5rOHMuaW8vdjESEVNlbGZTdWJqZWN0UmV2aWV3EhoKEAoAEgAaACIAKgAyADgAQgASBgoECgASABoAIgA=',
};

// kubectl always speaks the reference's groups
const reference = naming('kubernetes');

/** The envelope's type and the raw message decoded by the review table of its kind. */
function decode(b64: string) {
  const unknown = readEnvelope(Buffer.from(b64, 'base64'));
  const table = tableForKind(unknown.kind, unknown.apiVersion);
  if (!table) throw new Error(`no table for ${unknown.kind}`);
  return { apiVersion: unknown.apiVersion, kind: unknown.kind, ...(decodeMessage(unknown.raw, table) as object) };
}

// ---- a minimal encoder, for fields kubectl does not send in the captures ----
const varint = (n: number): number[] => {
  const out: number[] = [];
  let v = n;
  do {
    const b = v % 128;
    v = Math.floor(v / 128);
    out.push(v ? b | 0x80 : b);
  } while (v);
  return out;
};
const str = (field: number, data: string | number[]) => {
  const b = typeof data === 'string' ? [...Buffer.from(data, 'utf8')] : data;
  return [...varint((field << 3) | 2), ...varint(b.length), ...b];
};
const num = (field: number, n: number) => [...varint(field << 3), ...varint(n)];

/** The table of a review kind, built from the schema and the field numbers. */
const review = (kind: string): MessageTable => tableForKind(kind) as MessageTable;

describe('review protobuf tables', () => {
  const authorizationV1 = `${group(reference, 'authorization')}/v1`;
  const authenticationV1 = `${group(reference, 'authentication')}/v1`;

  it.each([
    [
      'ssarResource',
      {
        apiVersion: authorizationV1,
        kind: 'SelfSubjectAccessReview',
        metadata: {},
        spec: { resourceAttributes: { namespace: 'team-a', verb: 'list', resource: 'pods' } },
      },
    ],
    [
      'ssarSubresource',
      {
        apiVersion: authorizationV1,
        kind: 'SelfSubjectAccessReview',
        metadata: {},
        spec: {
          resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'pods', subresource: 'log', name: 'web' },
        },
      },
    ],
    [
      'ssarNonResource',
      {
        apiVersion: authorizationV1,
        kind: 'SelfSubjectAccessReview',
        metadata: {},
        spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' } },
      },
    ],
    [
      'ssrr',
      { apiVersion: authorizationV1, kind: 'SelfSubjectRulesReview', metadata: {}, spec: { namespace: 'team-a' } },
    ],
    ['ssr', { apiVersion: authenticationV1, kind: 'SelfSubjectReview', metadata: {}, status: { userInfo: {} } }],
  ] as const)('decode what kubectl sent: %s', (name, want) => {
    // kubectl sends the empty status too: it decodes to an empty object.
    expect(decode(CAPTURED[name])).toEqual({ status: {}, ...want });
  });

  it('decode SubjectAccessReview subjects, extra and selectors', () => {
    const labelRequirement = [...str(1, 'app'), ...str(2, 'In'), ...str(3, 'web')];
    const attrs = [...str(2, 'list'), ...str(5, 'pods'), ...str(9, [...str(2, labelRequirement)])];
    const extra = (k: string, ...items: string[]) =>
      str(5, [
        ...str(1, k),
        ...str(
          2,
          items.flatMap((i) => str(1, i)),
        ),
      ]);
    const spec = [
      ...str(1, attrs),
      ...str(3, 'alice'),
      ...str(4, 'devs'),
      ...str(4, 'qa'),
      ...extra('scopes', 'a', 'b'),
      ...str(6, 'u-1'),
    ];
    const meta = [...str(1, 'named'), ...str(8, [...num(1, 1_900_000_000)])];
    const raw = Uint8Array.from([...str(1, meta), ...str(2, spec)]);
    expect(decodeMessage(raw, review('SubjectAccessReview'))).toEqual({
      metadata: { name: 'named', creationTimestamp: '2030-03-17T17:46:40Z' },
      spec: {
        resourceAttributes: {
          verb: 'list',
          resource: 'pods',
          labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['web'] }] },
        },
        user: 'alice',
        groups: ['devs', 'qa'],
        extra: { scopes: ['a', 'b'] },
        uid: 'u-1',
      },
    });
  });

  it('keep sent-but-empty attributes, so validation sees them', () => {
    const raw = Uint8Array.from(str(2, str(1, [...str(1, ''), ...str(2, '')])));
    expect(decodeMessage(raw, review('SelfSubjectAccessReview'))).toEqual({
      spec: { resourceAttributes: {} },
    });
  });

  it('decode TokenReview', () => {
    const raw = Uint8Array.from(str(2, [...str(1, 's3cret'), ...str(2, 'api'), ...str(2, 'x')]));
    expect(decodeMessage(raw, review('TokenReview'))).toEqual({
      spec: { token: 's3cret', audiences: ['api', 'x'] },
    });
  });
});
