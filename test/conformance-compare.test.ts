/** The comparer of `npm run conformance:diff` (tools/conformance/compare.ts): what it normalizes, finds and excuses. */
import { describe, expect, it } from 'vitest';
import {
  compareAnswers,
  diffValues,
  explain,
  normalize,
  onlyWhatEmbeddedHas,
  openapiShape,
  type WrittenDown,
} from '../tools/conformance/compare.ts';
import type { Answer } from '../tools/conformance/http.ts';

const answer = (body: unknown, over: Partial<Answer> = {}): Answer => ({
  status: 200,
  contentType: 'application/json',
  warnings: [],
  body,
  ...over,
});

describe('conformance comparer', () => {
  it.each([
    ['a uid anywhere in a string', 'uid 0f8e7a3c-1b2d-4e5f-8a9b-0c1d2e3f4a5b of x', 'uid <uid> of x'],
    ['a timestamp', '2026-11-28T01:02:03Z', '<time>'],
    ['a micro timestamp', '2026-11-28T01:02:03.123456Z', '<time>'],
    ['a credential id', `X509SHA256=${'ab'.repeat(32)}`, '<credential-id>'],
    ['a plain string', 'conform-1', 'conform-1'],
    ["a pod's token volume", 'kube-api-access-x7k2p', 'kube-api-access-<generated>'],
    ['a volume named alike by hand', 'kube-api-access-mine', 'kube-api-access-mine'],
  ])('normalizes %s', (_, value, expected) => {
    expect(normalize(value)).toBe(expected);
  });

  it('replaces what each server picks by key, generated names, and Table ages and addresses', () => {
    expect(
      normalize({
        metadata: { name: 'gen-x7k2p', generateName: 'gen-', resourceVersion: '42' },
        spec: { clusterIP: '10.96.0.7', clusterIPs: ['10.96.0.7'] },
        rows: [{ cells: ['a', '5m3s', 1, '10.96.0.7', '10.96.0.7x'] }],
      }),
    ).toEqual({
      metadata: { name: 'gen-<generated>', generateName: 'gen-', resourceVersion: '<rv>' },
      spec: { clusterIP: '<ip>', clusterIPs: '<ip>' },
      rows: [{ cells: ['a', '<age>', 1, '<ip>', '10.96.0.7x'] }],
    });
    // An empty resourceVersion is no server's pick: it stays, so a missing one shows.
    expect(normalize({ resourceVersion: '' })).toEqual({ resourceVersion: '' });
  });

  it("compares a Table column's description as present, not by its words", () => {
    const columns = (description?: string) => ({
      columnDefinitions: [{ name: 'Name', type: 'string', format: 'name', description }],
    });
    expect(normalize(columns('Name must be unique within a namespace.'))).toEqual(normalize(columns('The name.')));
    expect(normalize(columns('The name.'))).not.toEqual(normalize(columns('')));
    expect(normalize(columns('The name.'))).not.toEqual(normalize(columns()));
  });

  it("replaces the record's resourceVersion a Status message quotes, not the client's precondition", () => {
    const message = (record: number) =>
      `Operation cannot be fulfilled on ConfigMap "x": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${record}). The object might have been modified`;
    expect(normalize({ kind: 'Status', message: message(514) })).toEqual(
      normalize({ kind: 'Status', message: message(324) }),
    );
    expect(normalize({ message: message(514) })).toEqual({
      message: message(0).replace('record (0)', 'record (<rv>)'),
    });
    // Only in a message: elsewhere the same words are data.
    expect(normalize({ data: { k: message(514) } })).toEqual({ data: { k: message(514) } });
  });

  it('names each differing place, absent ones included', () => {
    expect(diffValues({ a: 1, b: [1, 2], c: 'x' }, { a: 1, b: [1], d: 'y' }, 'body')).toEqual([
      { at: 'body.b[1]', real: 2, embedded: undefined },
      { at: 'body.c', real: 'x', embedded: undefined },
      { at: 'body.d', real: undefined, embedded: 'y' },
    ]);
  });

  it('compares status, Content-Type (spacing and case aside), warnings and body', () => {
    const real = answer({ kind: 'X' }, { contentType: 'application/json; charset=utf-8', warnings: ['w'] });
    const embedded = answer({ kind: 'Y' }, { status: 201, contentType: 'application/json' });
    expect(compareAnswers(real, embedded, 'exact').map((d) => d.at)).toEqual([
      'status',
      'content-type',
      'warnings[0]',
      'body.kind',
    ]);
    expect(compareAnswers(real, embedded, 'status').map((d) => d.at)).toEqual(['status', 'content-type']);
  });

  it('in discovery, leaves out the named entries only the real server has, and compares the rest whole', () => {
    const real = { resources: [{ name: 'bindings' }, { name: 'pods', verbs: ['get', 'list'] }] };
    const embedded = { resources: [{ name: 'pods', verbs: ['get'] }] };
    expect(onlyWhatEmbeddedHas(real, embedded, false)).toEqual({
      resources: [{ name: 'pods', verbs: ['get', 'list'] }],
    });
    expect(compareAnswers(answer(real), answer(embedded), 'subset').map((d) => d.at)).toEqual([
      'body.resources[0].verbs[1]',
    ]);
  });

  it('in OpenAPI, compares the operations and schema shapes of what the embedded document serves', () => {
    const doc = (extra: object, type: string) => ({
      paths: { '/api/v1/pods': { get: { operationId: 'list', parameters: [{ name: 'limit' }] } }, ...extra },
      definitions: { Pod: { type: 'object', description: 'words differ', properties: { spec: { type } } } },
    });
    const real = doc({ '/api/v1/bindings': { post: { operationId: 'bind' } } }, 'object');
    expect(openapiShape(real)).toMatchObject({
      schemas: { Pod: { type: 'object', properties: { spec: { type: 'object' } } } },
    });
    expect(compareAnswers(answer(real), answer(doc({}, 'object')), 'openapi')).toEqual([]);
    expect(compareAnswers(answer(real), answer(doc({}, 'string')), 'openapi').map((d) => d.at)).toEqual([
      'body.schemas.Pod.properties.spec.type',
    ]);
  });

  it('excuses a request only when every difference is written down for it', () => {
    const known: WrittenDown[] = [
      { name: 'ages', kind: 'deliberate', request: 'crud/*/table', at: ['body.rows[*].cells[*]'], reason: 'r' },
      { name: 'whole', kind: 'defect', request: ['errors/x'], reason: 'r' },
    ];
    const cell = { at: 'body.rows[0].cells[2]', real: 1, embedded: 2 };
    expect(explain('crud/pods/table', [cell], known)?.map((k) => k.name)).toEqual(['ages']);
    expect(explain('crud/pods/table', [cell, { at: 'status', real: 200, embedded: 404 }], known)).toBeUndefined();
    expect(explain('crud/pods/get', [cell], known)).toBeUndefined();
    expect(explain('errors/x', [{ at: 'status', real: 1, embedded: 2 }], known)?.map((k) => k.name)).toEqual(['whole']);
  });
});
