import { describe, expect, it } from 'vitest';
import { declType } from '../../src/cel/schema-types.ts';
import { schemaFromDocument } from './schemas.ts';

const WIDGET = { group: 'example.com', version: 'v1', kind: 'Widget' };

/** An OpenAPI v3 document as API servers publish it for a custom resource. */
const doc = {
  components: {
    schemas: {
      'com.example.v1.Widget': {
        type: 'object',
        'x-kubernetes-group-version-kind': [WIDGET],
        properties: {
          apiVersion: { type: 'string' },
          metadata: { allOf: [{ $ref: '#/components/schemas/io.meta.ObjectMeta' }], description: 'meta' },
          spec: {
            type: 'object',
            properties: {
              size: { type: 'integer' },
              port: { 'x-kubernetes-int-or-string': true },
              tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
              tree: { $ref: '#/components/schemas/com.example.v1.Node' },
            },
          },
        },
      },
      'io.meta.ObjectMeta': {
        type: 'object',
        properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
      },
      'com.example.v1.Node': {
        type: 'object',
        properties: { children: { type: 'array', items: { $ref: '#/components/schemas/com.example.v1.Node' } } },
      },
    },
  },
};

describe('schemas from OpenAPI v3 documents', () => {
  it('finds the kind by its group-version-kind tag and resolves references', () => {
    const t = declType(schemaFromDocument(doc, WIDGET)!);
    expect(t).toMatchObject({
      kind: 'object',
      fields: {
        apiVersion: { kind: 'scalar', name: 'string' },
        metadata: { kind: 'object', fields: { name: { kind: 'scalar', name: 'string' }, labels: { kind: 'map' } } },
        spec: {
          kind: 'object',
          fields: {
            size: { kind: 'scalar', name: 'int' },
            port: { kind: 'dyn' },
            tags: { kind: 'list', listType: 'set' },
          },
        },
      },
    });
  });

  it('cuts recursive schemas at a bounded depth', () => {
    let t = declType(schemaFromDocument(doc, WIDGET)!);
    let depth = 0;
    const path = ['spec', 'tree'];
    for (const f of path) t = (t as { fields: Record<string, typeof t> }).fields[f];
    while (t.kind === 'object' && t.fields.children) {
      const children = t.fields.children;
      if (children.kind !== 'list') break;
      t = children.items;
      depth++;
    }
    expect(t.kind).toBe('dyn');
    expect(depth).toBeGreaterThan(5);
    expect(depth).toBeLessThan(40);
  });

  it('has nothing for other kinds or a dangling reference', () => {
    expect(schemaFromDocument(doc, { ...WIDGET, kind: 'Gadget' })).toBeUndefined();
    const dangling = {
      components: {
        schemas: { w: { 'x-kubernetes-group-version-kind': [WIDGET], $ref: '#/components/schemas/nope' } },
      },
    };
    expect(declType(schemaFromDocument(dangling, WIDGET)!)).toEqual({ kind: 'dyn' });
  });
});
