import { describe, expect, it } from 'vitest';
import {
  defaultAPIService,
  validateAPIServiceCreate,
  validateAPIServiceStatusUpdate,
  validateAPIServiceUpdate,
} from './api-service.ts';
import type { Obj } from './raw.ts';
import { b64, ctx, fieldError, type Loose, n, variant } from './test-helpers.ts';

const valid = (): Loose => ({
  metadata: { name: 'v1beta1.metrics.example.com', resourceVersion: '1' },
  spec: {
    group: 'metrics.example.com',
    version: 'v1beta1',
    groupPriorityMinimum: 100,
    versionPriority: 100,
    service: { namespace: 'monitoring', name: 'metrics', port: 443 },
    caBundle: b64('-----BEGIN CERTIFICATE-----\n...\n'),
  },
});
type AS = Loose;
const withChange = (change: (o: AS) => void) => variant(valid, change as (o: Loose) => void) as AS;
const err = fieldError;

describe('APIService create', () => {
  it.each([
    ['a remote service', () => {}],
    [
      'the legacy local v1',
      (o: AS) => {
        o.metadata.name = 'v1.';
        o.spec = { group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 } as never;
      },
    ],
    [
      'the maximum priorities',
      (o: AS) => Object.assign(o.spec, { groupPriorityMinimum: 20000, versionPriority: 1000 }),
    ],
    [
      'insecureSkipTLSVerify without caBundle',
      (o: AS) => Object.assign(o.spec, { caBundle: undefined, insecureSkipTLSVerify: true }),
    ],
    ['no port (443 applies)', (o: AS) => delete o.spec.service.port],
  ])('accepts %s', (_n, change) => {
    expect(validateAPIServiceCreate(withChange(change), ctx)).toEqual([]);
  });

  it.each([
    [
      'a name other than version.group',
      (o: AS) => (o.metadata.name = 'metrics'),
      err(
        'FieldValueInvalid',
        'metadata.name',
        'Invalid value: "metrics": must be `spec.version+"."+spec.group`: "v1beta1.metrics.example.com"',
      ),
    ],
    [
      'an empty group with another version',
      (o: AS) => {
        o.metadata.name = 'v2.';
        Object.assign(o.spec, { group: '', version: 'v2' });
      },
      err(
        'FieldValueRequired',
        'spec.group',
        `Required value: only v1 may have an empty group and it better be legacy ${n.apiServer.replace(/-apiserver$/, '')}`,
      ),
    ],
    [
      'an invalid version',
      (o: AS) => {
        o.metadata.name = 'V1.metrics.example.com';
        o.spec.version = 'V1';
      },
      err(
        'FieldValueInvalid',
        'spec.version',
        "Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      ),
    ],
    [
      'groupPriorityMinimum 0',
      (o: AS) => (o.spec.groupPriorityMinimum = 0),
      err('FieldValueInvalid', 'spec.groupPriorityMinimum', 'Invalid value: 0: must be positive and less than 20000'),
    ],
    [
      'groupPriorityMinimum 20001',
      (o: AS) => (o.spec.groupPriorityMinimum = 20001),
      err(
        'FieldValueInvalid',
        'spec.groupPriorityMinimum',
        'Invalid value: 20001: must be positive and less than 20000',
      ),
    ],
    [
      'versionPriority 1001',
      (o: AS) => (o.spec.versionPriority = 1001),
      err('FieldValueInvalid', 'spec.versionPriority', 'Invalid value: 1001: must be positive and less than 1000'),
    ],
    [
      'a local service with a caBundle',
      (o: AS) => delete (o.spec as Obj).service,
      err('FieldValueInvalid', 'spec.caBundle', 'Invalid value: "32 bytes": local APIServices may not have a caBundle'),
    ],
    [
      'a local service skipping TLS verification',
      (o: AS) => Object.assign(o.spec, { service: undefined, caBundle: undefined, insecureSkipTLSVerify: true }),
      err(
        'FieldValueInvalid',
        'spec.insecureSkipTLSVerify',
        'Invalid value: true: local APIServices may not have insecureSkipTLSVerify',
      ),
    ],
    [
      'a service without namespace',
      (o: AS) => delete o.spec.service.namespace,
      err('FieldValueRequired', 'spec.service.namespace', 'Required value'),
    ],
    [
      'a service without name',
      (o: AS) => delete o.spec.service.name,
      err('FieldValueRequired', 'spec.service.name', 'Required value'),
    ],
    [
      'port 0',
      (o: AS) => (o.spec.service.port = 0),
      err(
        'FieldValueInvalid',
        'spec.service.port',
        'Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
      ),
    ],
    [
      'port 65536',
      (o: AS) => (o.spec.service.port = 65536),
      err(
        'FieldValueInvalid',
        'spec.service.port',
        'Invalid value: 65536: port is not valid: must be between 1 and 65535, inclusive',
      ),
    ],
    [
      'insecureSkipTLSVerify with a caBundle',
      (o: AS) => ((o.spec as Obj).insecureSkipTLSVerify = true),
      err(
        'FieldValueInvalid',
        'spec.insecureSkipTLSVerify',
        'Invalid value: true: may not be true if caBundle is present',
      ),
    ],
    [
      'a priority of the wrong type',
      (o: AS) => ((o.spec as Obj).versionPriority = '5'),
      err('FieldValueInvalid', 'spec.versionPriority', 'Invalid value: "5": must be of type integer'),
    ],
  ])('rejects %s', (_n, change, expected) => {
    expect(validateAPIServiceCreate(withChange(change), ctx)).toContainEqual(expected);
  });
});

describe('APIService update, status and defaults', () => {
  it('validates the new object on update', () => {
    expect(validateAPIServiceUpdate(valid(), valid(), ctx)).toEqual([]);
    expect(
      validateAPIServiceUpdate(
        withChange((o) => (o.spec.versionPriority = 0)),
        valid(),
        ctx,
      ),
    ).toEqual([
      err('FieldValueInvalid', 'spec.versionPriority', 'Invalid value: 0: must be positive and less than 1000'),
    ]);
  });

  it('accepts True, False and Unknown condition statuses only', () => {
    const withStatus = (status: string) => ({
      ...valid(),
      status: { conditions: [{ type: 'Available', status, reason: 'Passed' }] },
    });
    expect(validateAPIServiceStatusUpdate(withStatus('False'), valid(), ctx)).toEqual([]);
    expect(validateAPIServiceStatusUpdate(withStatus('Maybe'), valid(), ctx)).toEqual([
      err(
        'FieldValueNotSupported',
        'status.conditions[0].status',
        'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"',
      ),
    ]);
  });

  it('defaults the service port to 443', () => {
    const o = withChange((x) => delete x.spec.service.port);
    defaultAPIService(o);
    expect(o.spec.service.port).toBe(443);
  });
});
