import { describe, expect, it } from 'vitest';
import { naming } from '../api/naming.ts';
import { FeatureGates } from './features.ts';
import {
  configApiVersion,
  configFileFlagSpecs,
  configFlagSpecs,
  configKind,
  configzSectionName,
  controllerManagerSchema,
  defaultConfiguration,
  describeSchema,
  type Field,
  fieldPath,
  formatGoDuration,
  type SignerFilesConfiguration,
} from './schema.ts';

const CONTROLLERS = [{ name: 'csrsigning', aliases: ['certificatesigningrequest-signing-controller'], workers: 5 }];

function schemaFor(flavor: 'orch' | 'kubernetes' = 'orch') {
  return controllerManagerSchema({ naming: naming(flavor), controllers: CONTROLLERS, features: new FeatureGates() });
}

describe('formatGoDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [1.5, '1.5ms'],
    [0.0015, '1.5µs'],
    [0.000001, '1ns'],
    [2_000, '2s'],
    [1_500, '1.5s'],
    [90_000, '1m30s'],
    [60_000, '1m0s'],
    [3_600_000, '1h0m0s'],
    [8760 * 3_600_000, '8760h0m0s'],
    [-2_000, '-2s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
  });
});

describe('names from the flavor', () => {
  it('apiVersion, kind and the /configz section', () => {
    const o = naming('orch');
    const k = naming('kubernetes');
    expect(configApiVersion(o)).toBe(`${o.configGroup}/v1alpha1`);
    expect(configKind(o)).toBe('OrchControllerManagerConfiguration');
    expect(configKind(k)).toBe('KubernetesControllerManagerConfiguration');
    // The reference's own section is kubecontrollermanager.config.k8s.io.
    expect(configzSectionName(k)).toBe(`kubecontrollermanager.${k.configGroup}`);
    expect(configzSectionName(o)).toBe(`${o.controllerManager.replaceAll('-', '')}.${o.configGroup}`);
  });

  it('signer flags carry the flavor words for the node agent and the API server', () => {
    for (const flavor of ['orch', 'kubernetes'] as const) {
      const n = naming(flavor);
      const names = configFlagSpecs(schemaFor(flavor)).map((s) => s.name);
      expect(names).toContain(`cluster-signing-${n.nodeAgent}-serving-cert-file`);
      expect(names).toContain(`cluster-signing-${n.nodeAgent}-client-key-file`);
      expect(names).toContain(`cluster-signing-${n.apiServer}-client-cert-file`);
      expect(names).toContain('cluster-signing-legacy-unknown-key-file');
    }
  });
});

describe('flags', () => {
  it("keep the daemon's current flag names, types and defaults", () => {
    const specs = new Map(configFlagSpecs(schemaFor()).map((s) => [s.name, s]));
    const expectFlag = (name: string, type: string, def?: string) => {
      const spec = specs.get(name);
      expect([spec?.type, spec?.default], name).toEqual([type, def]);
    };
    expectFlag('controllers', 'stringArray', '*');
    expectFlag('kube-api-burst', 'int', '30');
    expectFlag('kube-api-content-type', 'string', 'application/vnd.kubernetes.protobuf');
    expectFlag('v', 'int', '2');
    expectFlag('logging-format', 'string', 'text');
    expectFlag('feature-gates', 'mapStringBool', undefined);
    expectFlag('leader-elect', 'bool', 'true');
    expectFlag('leader-elect-lease-duration', 'duration', '15s');
    expectFlag('leader-elect-renew-deadline', 'duration', '10s');
    expectFlag('leader-elect-retry-period', 'duration', '2s');
    expectFlag('leader-elect-resource-name', 'string', undefined);
    expectFlag('leader-elect-resource-namespace', 'string', undefined);
    expectFlag('leader-elect-release-on-cancel', 'bool', 'true');
    expectFlag('concurrent-csrsigning-syncs', 'int', '5');
    expectFlag('cluster-signing-duration', 'duration', '8760h0m0s');
    expectFlag('secure-port', 'int', '10257');
    expectFlag('bind-address', 'string', '0.0.0.0');
    expectFlag('authorization-always-allow-paths', 'stringArray', '/healthz,/readyz,/livez');
    // qps is a float32 in the reference; flags.ts has no float type, so it is read as a string and checked here.
    expectFlag('kube-api-qps', 'string', '20');
  });

  it('--feature-gates lists the settable gates in its usage', () => {
    const fg = configFlagSpecs(schemaFor()).find((s) => s.name === 'feature-gates')!;
    expect(fg.usage).toContain('NativeHistograms=true|false (BETA - default=true)');
    expect(fg.usage).not.toContain('ComponentSLIs');
  });

  it('can rename the serving port and address flags', () => {
    const s = controllerManagerSchema({
      naming: naming(),
      controllers: [],
      features: new FeatureGates(),
      servingFlagNames: { securePort: 'diagnostics-port', bindAddress: 'diagnostics-address' },
    });
    const names = configFlagSpecs(s).map((f) => f.name);
    expect(names).toContain('diagnostics-port');
    expect(names).not.toContain('secure-port');
  });

  it('--config and --config-dir', () => {
    expect(configFileFlagSpecs().map((s) => [s.name, s.type])).toEqual([
      ['config', 'string'],
      ['config-dir', 'string'],
    ]);
  });
});

describe('defaults', () => {
  it('mirror the flags', () => {
    const c = defaultConfiguration(schemaFor());
    expect(c.generic).toEqual({
      clientConnection: { qps: 20, burst: 30, contentType: 'application/vnd.kubernetes.protobuf', extraHeaders: {} },
      leaderElection: {
        leaderElect: true,
        leaseDuration: 15_000,
        renewDeadline: 10_000,
        retryPeriod: 2_000,
        resourceLock: 'leases',
        resourceName: '',
        resourceNamespace: '',
        releaseOnCancel: true,
      },
      controllers: ['*'],
      useServiceAccountCredentials: false,
    });
    expect(c.concurrency).toEqual({ csrsigning: 5 });
    expect(c.featureGates).toEqual({});
    expect(c.logging).toEqual({ format: 'text', verbosity: 2 });
    expect(c.serving).toEqual({
      bindAddress: '0.0.0.0',
      securePort: 10257,
      certFile: '',
      keyFile: '',
      clientCAFile: '',
      alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
    });
    expect(c.csrApprovingController).toEqual({
      nodeAgentServing: { enabled: false, dnsNamePatterns: [], maxExpirationSeconds: 0 },
    });
    expect(c.csrSigningController.clusterSigningDuration).toBe(8760 * 3_600_000);
  });

  it('are fresh copies each time', () => {
    const s = schemaFor();
    const a = defaultConfiguration(s);
    a.generic.controllers.push('x');
    a.serving.alwaysAllowPaths.length = 0;
    const b = defaultConfiguration(s);
    expect(b.generic.controllers).toEqual(['*']);
    expect(b.serving.alwaysAllowPaths).toHaveLength(3);
  });
});

describe('describeSchema', () => {
  it('gives every field its kind, type, default and flag', () => {
    const rows = new Map(describeSchema(schemaFor()).map((r) => [r.path, r]));
    expect(rows.get('generic.leaderElection.leaseDuration')).toEqual({
      path: 'generic.leaderElection.leaseDuration',
      kind: 'scalar',
      type: 'duration',
      default: '15s',
      flag: '--leader-elect-lease-duration',
    });
    expect(rows.get('generic.clientConnection.extraHeaders')).toMatchObject({
      kind: 'mapList',
      type: 'map[string][]string',
      flag: '',
    });
    expect(rows.get('featureGates')).toMatchObject({ kind: 'map', type: 'map[string]bool', flag: '--feature-gates' });
    expect(rows.get('concurrency')).toMatchObject({ kind: 'map', flag: '--concurrent-csrsigning-syncs' });
    expect(rows.get('generic.controllers')).toMatchObject({ kind: 'list', type: '[]string', default: '["*"]' });
  });
});

it('fieldPath writes map keys and indexes in brackets', () => {
  expect(fieldPath(['generic', 'leaderElection', 'leaseDuration'])).toBe('generic.leaderElection.leaseDuration');
  expect(fieldPath(['featureGates', 'NativeHistograms'], 1)).toBe('featureGates[NativeHistograms]');
});

it('field descriptions must match the interfaces (checked by tsc)', () => {
  // @ts-expect-error a list description for a number property
  const wrongKind: Field<number> = { kind: 'list', item: 'string', default: [], doc: '' };
  const missing: Field<SignerFilesConfiguration> = {
    kind: 'struct',
    doc: '',
    // @ts-expect-error a structure description that leaves out a property (keyFile)
    fields: { certFile: { kind: 'scalar', type: 'string', default: '', doc: '' } },
  };
  const right: Field<SignerFilesConfiguration> = {
    kind: 'struct',
    doc: '',
    fields: {
      certFile: { kind: 'scalar', type: 'string', default: '', doc: '' },
      keyFile: { kind: 'scalar', type: 'string', default: '', doc: '' },
    },
  };
  expect([wrongKind, missing, right]).toHaveLength(3);
});
