/**
 * Each kind encoded field by field, with the field numbers of the upstream generated.proto files written
 * out here (not taken from the tables), then decoded through the envelope and compared with its JSON form.
 */
import { describe, expect, it } from 'vitest';
import { type Node, schemaFor } from '../../api/schema.ts';
import { decodeProtobufBody } from './index.ts';
import type { MessageTable } from './schema.ts';
import { PROTOBUF_KINDS, tableForKind } from './tables.ts';
import { concat, envelope, pb } from './test-encoder.ts';

const text = (s: string) => new TextEncoder().encode(s);
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** ObjectMeta as the Go marshaller writes it for a new object: every string, an empty creationTimestamp. */
function newMeta(name: string, namespace = '', extra: Uint8Array[] = []): Uint8Array {
  return concat(
    pb.string(1, name),
    pb.string(2, ''),
    pb.string(3, namespace),
    pb.string(4, ''),
    pb.string(5, ''),
    pb.string(6, ''),
    pb.varint(7, 0),
    pb.message(8),
    ...extra,
  );
}

describe('ObjectMeta', () => {
  it('decodes every field', () => {
    const meta = concat(
      pb.string(1, 'web'),
      pb.string(2, 'web-'),
      pb.string(3, 'prod'),
      pb.string(4, '/api/v1/x'),
      pb.string(5, 'uid-1'),
      pb.string(6, '42'),
      pb.varint(7, 3),
      pb.time(8, '2026-01-02T03:04:05Z'),
      pb.time(9, '2026-02-03T04:05:06Z'),
      pb.varint(10, 30),
      pb.stringMap(11, { app: 'web', tier: '' }),
      pb.stringMap(12, { note: 'hello' }),
      pb.message(
        13,
        pb.string(1, 'ReplicaSet'),
        pb.string(3, 'web-abc'),
        pb.string(4, 'uid-0'),
        pb.string(5, 'apps/v1'),
        pb.varint(6, true),
        pb.varint(7, false),
      ),
      pb.string(14, 'example.com/one'),
      pb.string(14, 'example.com/two'),
      pb.message(
        17,
        pb.string(1, 'kubectl-create'),
        pb.string(2, 'Update'),
        pb.string(3, 'v1'),
        pb.time(4, '2026-01-02T03:04:05Z'),
        pb.string(6, 'FieldsV1'),
        pb.message(7, pb.bytes(1, text('{"f:data":{".":{}}}'))),
        pb.string(8, ''),
      ),
    );
    const object = decodeProtobufBody(envelope('v1', 'ConfigMap', pb.message(1, meta)));
    expect(object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'web',
        generateName: 'web-',
        namespace: 'prod',
        selfLink: '/api/v1/x',
        uid: 'uid-1',
        resourceVersion: '42',
        generation: 3,
        creationTimestamp: '2026-01-02T03:04:05Z',
        deletionTimestamp: '2026-02-03T04:05:06Z',
        deletionGracePeriodSeconds: 30,
        labels: { app: 'web', tier: '' },
        annotations: { note: 'hello' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web-abc',
            uid: 'uid-0',
            controller: true,
            blockOwnerDeletion: false,
          },
        ],
        finalizers: ['example.com/one', 'example.com/two'],
        managedFields: [
          {
            manager: 'kubectl-create',
            operation: 'Update',
            apiVersion: 'v1',
            time: '2026-01-02T03:04:05Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { '.': {} } },
          },
        ],
      },
    });
  });
});

describe('core/v1 kinds', () => {
  it('Namespace, as `kubectl create namespace` sends it', () => {
    const raw = concat(pb.message(1, newMeta('team-a')), pb.message(2), pb.message(3, pb.string(1, '')));
    expect(decodeProtobufBody(envelope('v1', 'Namespace', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a' },
      spec: {},
      status: {},
    });
  });

  it('Namespace with finalizers and status conditions', () => {
    const raw = concat(
      pb.message(1, newMeta('ns')),
      pb.message(2, pb.string(1, 'kubernetes')),
      pb.message(
        3,
        pb.string(1, 'Terminating'),
        pb.message(
          2,
          pb.string(1, 'NamespaceDeletionDiscoveryFailure'),
          pb.string(2, 'False'),
          pb.time(4, '2026-03-01T00:00:00Z'),
          pb.string(5, 'ResourcesDiscovered'),
          pb.string(6, 'ok'),
        ),
      ),
    );
    expect(decodeProtobufBody(envelope('v1', 'Namespace', raw))).toMatchObject({
      spec: { finalizers: ['kubernetes'] },
      status: {
        phase: 'Terminating',
        conditions: [
          {
            type: 'NamespaceDeletionDiscoveryFailure',
            status: 'False',
            lastTransitionTime: '2026-03-01T00:00:00Z',
            reason: 'ResourcesDiscovered',
            message: 'ok',
          },
        ],
      },
    });
  });

  it('ControllerRevision: data is a RawExtension (JSON bytes), though its JSON form is an atomic map', () => {
    const data = { spec: { template: { metadata: { labels: { app: 'web' } } } } };
    const raw = concat(
      pb.message(1, newMeta('web-7d9f', 'default')),
      pb.message(2, pb.bytes(1, text(JSON.stringify(data)))),
      pb.varint(3, 2),
    );
    expect(decodeProtobufBody(envelope('apps/v1', 'ControllerRevision', raw))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'web-7d9f', namespace: 'default' },
      data,
      revision: 2,
    });
  });

  it('ConfigMap with data, binaryData and immutable', () => {
    const raw = concat(
      pb.message(1, newMeta('settings', 'default')),
      pb.stringMap(2, { mode: 'fast', 'app.conf': 'a=1\nb=2\n' }),
      pb.entry(3, 'logo.bin', pb.bytes(2, Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x00))),
      pb.varint(4, false),
    );
    expect(decodeProtobufBody(envelope('v1', 'ConfigMap', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'default' },
      data: { mode: 'fast', 'app.conf': 'a=1\nb=2\n' },
      binaryData: { 'logo.bin': 'iVBORwA=' },
      immutable: false,
    });
  });

  it('Secret with data bytes, stringData, type and immutable', () => {
    const raw = concat(
      pb.message(1, newMeta('creds', 'default')),
      pb.entry(2, 'password', pb.bytes(2, text('s3cr3t'))),
      pb.stringMap(4, { user: 'admin' }),
      pb.string(3, 'Opaque'),
      pb.varint(5, true),
    );
    expect(decodeProtobufBody(envelope('v1', 'Secret', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'default' },
      data: { password: b64('s3cr3t') },
      stringData: { user: 'admin' },
      type: 'Opaque',
      immutable: true,
    });
  });

  it('Pod with a full container and the common PodSpec fields', () => {
    const container = concat(
      pb.string(1, 'app'),
      pb.string(2, 'nginx:1.27'),
      pb.string(3, '/bin/sh'),
      pb.string(4, '-c'),
      pb.string(4, 'serve'),
      pb.string(5, '/srv'),
      pb.message(6, pb.string(1, 'http'), pb.varint(3, 8080), pb.string(4, 'TCP')),
      pb.message(19, pb.string(1, 'CFG_'), pb.message(2, pb.message(1, pb.string(1, 'settings')))),
      pb.message(7, pb.string(1, 'MODE'), pb.string(2, 'fast')),
      pb.message(
        7,
        pb.string(1, 'PASSWORD'),
        pb.string(2, ''),
        pb.message(
          3,
          pb.message(4, pb.message(1, pb.string(1, 'creds')), pb.string(2, 'password'), pb.varint(3, true)),
        ),
      ),
      pb.message(
        7,
        pb.string(1, 'NODE'),
        pb.message(3, pb.message(1, pb.string(1, 'v1'), pb.string(2, 'spec.nodeName'))),
      ),
      pb.message(
        8,
        pb.entry(1, 'cpu', pb.quantity(2, '500m')),
        pb.entry(1, 'memory', pb.quantity(2, '128Mi')),
        pb.entry(2, 'cpu', pb.quantity(2, '250m')),
      ),
      pb.message(9, pb.string(1, 'data'), pb.varint(2, true), pb.string(3, '/data'), pb.string(4, 'sub')),
      pb.message(
        10,
        pb.message(1, pb.message(2, pb.string(1, '/healthz'), pb.intOrString(2, 'http'), pb.string(4, 'HTTP'))),
        pb.varint(2, 5),
        pb.varint(4, 10),
      ),
      pb.message(11, pb.message(1, pb.message(3, pb.intOrString(1, 8080))), pb.varint(6, 3)),
      pb.message(12, pb.message(2, pb.message(1, pb.string(1, 'sleep'), pb.string(1, '5')))),
      pb.string(14, 'IfNotPresent'),
      pb.message(
        15,
        pb.message(1, pb.string(2, 'ALL')),
        pb.varint(2, false),
        pb.varint(4, 1000),
        pb.varint(5, true),
        pb.varint(7, false),
        pb.message(11, pb.string(1, 'RuntimeDefault')),
      ),
      pb.varint(18, true),
      pb.varint(99, 1), // a field the table does not know (skipped)
    );
    const spec = concat(
      pb.message(1, pb.string(1, 'data'), pb.message(2, pb.message(2, pb.string(1, 'Memory'), pb.quantity(2, '1Gi')))),
      pb.message(
        1,
        pb.string(1, 'cfg'),
        pb.message(2, pb.message(19, pb.message(1, pb.string(1, 'settings')), pb.varint(3, 420))),
      ),
      pb.message(1, pb.string(1, 'tls'), pb.message(2, pb.message(6, pb.string(1, 'tls-secret'), pb.varint(4, true)))),
      pb.message(2, container),
      pb.string(3, 'Always'),
      pb.varint(4, 30),
      pb.string(6, 'ClusterFirst'),
      pb.stringMap(7, { disktype: 'ssd' }),
      pb.string(8, 'runner'),
      pb.varint(21, false),
      pb.string(10, 'worker-1'),
      pb.message(14, pb.varint(2, 1000), pb.varint(4, 2000), pb.varint(4, 3000), pb.varint(5, 2000)),
      pb.message(15, pb.string(1, 'registry-creds')),
      pb.message(22, pb.string(1, 'dedicated'), pb.string(2, 'Equal'), pb.string(3, 'gpu'), pb.string(4, 'NoSchedule')),
      pb.message(22, pb.string(2, 'Exists'), pb.string(4, 'NoExecute'), pb.varint(5, 300)),
      pb.varint(25, 0),
      pb.varint(99, 0), // a field the message does not have: skipped
    );
    const raw = concat(
      pb.message(1, newMeta('web-0', 'default', [pb.stringMap(11, { app: 'web' })])),
      pb.message(2, spec),
      pb.message(3, pb.string(1, 'Pending'), pb.string(9, 'Burstable')),
    );
    expect(decodeProtobufBody(envelope('v1', 'Pod', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', namespace: 'default', labels: { app: 'web' } },
      spec: {
        volumes: [
          { name: 'data', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } },
          { name: 'cfg', configMap: { name: 'settings', defaultMode: 420 } },
          { name: 'tls', secret: { secretName: 'tls-secret', optional: true } },
        ],
        containers: [
          {
            name: 'app',
            image: 'nginx:1.27',
            command: ['/bin/sh'],
            args: ['-c', 'serve'],
            workingDir: '/srv',
            ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
            envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'settings' } }],
            env: [
              { name: 'MODE', value: 'fast' },
              { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password', optional: true } } },
              { name: 'NODE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
            ],
            resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m' } },
            volumeMounts: [{ name: 'data', readOnly: true, mountPath: '/data', subPath: 'sub' }],
            livenessProbe: {
              httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' },
              initialDelaySeconds: 5,
              periodSeconds: 10,
            },
            readinessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 3 },
            lifecycle: { preStop: { exec: { command: ['sleep', '5'] } } },
            imagePullPolicy: 'IfNotPresent',
            securityContext: {
              capabilities: { drop: ['ALL'] },
              privileged: false,
              runAsUser: 1000,
              runAsNonRoot: true,
              allowPrivilegeEscalation: false,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            tty: true,
          },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        nodeSelector: { disktype: 'ssd' },
        serviceAccountName: 'runner',
        automountServiceAccountToken: false,
        nodeName: 'worker-1',
        securityContext: { runAsUser: 1000, supplementalGroups: [2000, 3000], fsGroup: 2000 },
        imagePullSecrets: [{ name: 'registry-creds' }],
        tolerations: [
          { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
          { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        ],
        priority: 0,
      },
      status: { phase: 'Pending', qosClass: 'Burstable' },
    });
  });

  it('Node with spec.unschedulable, taints and status', () => {
    const raw = concat(
      pb.message(1, newMeta('worker-1', '', [pb.stringMap(11, { 'kubernetes.io/hostname': 'worker-1' })])),
      pb.message(
        2,
        pb.string(1, '10.0.1.0/24'),
        pb.string(7, '10.0.1.0/24'),
        pb.varint(4, true),
        pb.message(
          5,
          pb.string(1, 'node.kubernetes.io/unschedulable'),
          pb.string(3, 'NoSchedule'),
          pb.time(4, '2026-01-02T03:04:05Z'),
        ),
        pb.message(5, pb.string(1, 'gpu'), pb.string(2, 'true'), pb.string(3, 'NoExecute'), pb.message(4)),
      ),
      pb.message(
        3,
        pb.entry(1, 'cpu', pb.quantity(2, '4')),
        pb.entry(2, 'pods', pb.quantity(2, '110')),
        pb.message(
          4,
          pb.string(1, 'Ready'),
          pb.string(2, 'True'),
          pb.time(3, '2026-01-02T03:04:05Z'),
          pb.string(5, 'KubeletReady'),
        ),
        pb.message(5, pb.string(1, 'InternalIP'), pb.string(2, '10.0.0.5')),
      ),
    );
    expect(decodeProtobufBody(envelope('v1', 'Node', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'worker-1', labels: { 'kubernetes.io/hostname': 'worker-1' } },
      spec: {
        podCIDR: '10.0.1.0/24',
        podCIDRs: ['10.0.1.0/24'],
        unschedulable: true,
        taints: [
          { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-01-02T03:04:05Z' },
          { key: 'gpu', value: 'true', effect: 'NoExecute' },
        ],
      },
      status: {
        capacity: { cpu: '4' },
        allocatable: { pods: '110' },
        conditions: [
          { type: 'Ready', status: 'True', lastHeartbeatTime: '2026-01-02T03:04:05Z', reason: 'KubeletReady' },
        ],
        addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
      },
    });
  });

  it('refuses by name a field the schema leaves free-form (Node status.features)', () => {
    const raw = concat(pb.message(1, newMeta('worker-1')), pb.message(3, pb.message(13, pb.varint(1, true))));
    expect(() => decodeProtobufBody(envelope('v1', 'Node', raw))).toThrow(
      /Node\.status\.features: this server cannot decode it from protobuf; send it as JSON/,
    );
  });
});

describe('policy/v1 Eviction and meta/v1 DeleteOptions', () => {
  it('Eviction, as `kubectl drain` sends it', () => {
    const raw = concat(
      pb.message(1, newMeta('web-0', 'default')),
      pb.message(
        2,
        pb.varint(1, 0),
        pb.message(2, pb.string(1, 'uid-9'), pb.string(2, '17')),
        pb.string(4, 'Background'),
        pb.string(5, 'All'),
      ),
    );
    expect(decodeProtobufBody(envelope('policy/v1', 'Eviction', raw))).toEqual({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'web-0', namespace: 'default' },
      deleteOptions: {
        gracePeriodSeconds: 0,
        preconditions: { uid: 'uid-9', resourceVersion: '17' },
        propagationPolicy: 'Background',
        dryRun: ['All'],
      },
    });
  });

  it('Eviction with empty DeleteOptions', () => {
    const raw = concat(pb.message(1, newMeta('p', 'ns')), pb.message(2));
    expect(decodeProtobufBody(envelope('policy/v1', 'Eviction', raw))).toMatchObject({ deleteOptions: {} });
  });

  it('DeleteOptions on its own, with orphanDependents', () => {
    const raw = concat(pb.varint(1, 30), pb.varint(3, true));
    expect(decodeProtobufBody(envelope('v1', 'DeleteOptions', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 30,
      orphanDependents: true,
    });
  });
});

describe('certificates/v1 CertificateSigningRequest', () => {
  const pem = '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n';

  it('decodes the spec (request bytes, signer, expiration, usages, user info, extra) and status', () => {
    const spec = concat(
      pb.bytes(1, text(pem)),
      pb.string(2, 'kubernetes-admin'),
      pb.string(3, 'uid-7'),
      pb.string(4, 'system:masters'),
      pb.string(4, 'system:authenticated'),
      pb.string(5, 'digital signature'),
      pb.string(5, 'client auth'),
      pb.entry(6, 'scopes', pb.message(2, pb.string(1, 'a'), pb.string(1, 'b'))),
      pb.string(7, 'kubernetes.io/kube-apiserver-client'),
      pb.varint(8, 86400),
    );
    const status = concat(
      pb.message(
        1,
        pb.string(1, 'Approved'),
        pb.string(2, 'KubectlApprove'),
        pb.string(3, 'This CSR was approved by kubectl certificate approve.'),
        pb.time(4, '2026-01-02T03:04:05Z'),
        pb.message(5),
        pb.string(6, 'True'),
      ),
      pb.bytes(2, text('-----BEGIN CERTIFICATE-----\n')),
    );
    const raw = concat(pb.message(1, newMeta('node-csr')), pb.message(2, spec), pb.message(3, status));
    expect(decodeProtobufBody(envelope('certificates.k8s.io/v1', 'CertificateSigningRequest', raw))).toEqual({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'node-csr' },
      spec: {
        request: b64(pem),
        signerName: 'kubernetes.io/kube-apiserver-client',
        expirationSeconds: 86400,
        usages: ['digital signature', 'client auth'],
        username: 'kubernetes-admin',
        uid: 'uid-7',
        groups: ['system:masters', 'system:authenticated'],
        extra: { scopes: ['a', 'b'] },
      },
      status: {
        conditions: [
          {
            type: 'Approved',
            status: 'True',
            reason: 'KubectlApprove',
            message: 'This CSR was approved by kubectl certificate approve.',
            lastUpdateTime: '2026-01-02T03:04:05Z',
          },
        ],
        certificate: b64('-----BEGIN CERTIFICATE-----\n'),
      },
    });
  });

  it('keeps the apiVersion of the envelope whatever the group is called', () => {
    const raw = concat(pb.message(1, newMeta('x')), pb.message(2, pb.string(7, 'orch.io/signer')));
    expect(decodeProtobufBody(envelope('certificates.orch.io/v1', 'CertificateSigningRequest', raw))).toMatchObject({
      apiVersion: 'certificates.orch.io/v1',
      spec: { signerName: 'orch.io/signer' },
    });
  });
});

describe('apps/v1 Deployment and autoscaling/v1 Scale', () => {
  it('Deployment, as `kubectl create deployment web --image=nginx --replicas=2` sends it', () => {
    const container = concat(pb.string(1, 'nginx'), pb.string(2, 'nginx'), pb.message(8), pb.string(13, ''));
    const template = concat(
      pb.message(1, newMeta('', '', [pb.stringMap(11, { app: 'web' })])),
      pb.message(2, pb.message(2, container), pb.string(3, ''), pb.varint(11, false)),
    );
    const spec = concat(
      pb.varint(1, 2),
      pb.message(2, pb.stringMap(1, { app: 'web' })),
      pb.message(3, template),
      pb.message(4, pb.string(1, '')),
      pb.varint(5, 0),
      pb.varint(7, false),
    );
    const status = concat(pb.varint(1, 0), pb.varint(2, 0), pb.varint(3, 0), pb.varint(4, 0));
    const raw = concat(
      pb.message(1, newMeta('web', 'default', [pb.stringMap(11, { app: 'web' })])),
      pb.message(2, spec),
      pb.message(3, status),
    );
    expect(decodeProtobufBody(envelope('apps/v1', 'Deployment', raw))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }] },
        },
        strategy: {},
      },
      status: {},
    });
  });

  it('Deployment with match expressions, a rolling update strategy, zero replicas and status conditions', () => {
    const spec = concat(
      pb.varint(1, 0),
      pb.message(
        2,
        pb.message(2, pb.string(1, 'tier'), pb.string(2, 'In'), pb.string(3, 'web'), pb.string(3, 'api')),
        pb.message(2, pb.string(1, 'canary'), pb.string(2, 'DoesNotExist')),
      ),
      pb.message(4, pb.string(1, 'RollingUpdate'), pb.message(2, pb.intOrString(1, 0), pb.intOrString(2, '25%'))),
      pb.varint(5, 10),
      pb.varint(6, 3),
      pb.varint(7, true),
      pb.varint(9, 600),
    );
    const status = concat(
      pb.varint(1, 4),
      pb.varint(2, 2),
      pb.varint(7, 1),
      pb.message(
        6,
        pb.string(1, 'Available'),
        pb.string(2, 'False'),
        pb.time(6, '2026-01-02T03:04:05Z'),
        pb.time(7, '2026-01-02T03:04:00Z'),
        pb.string(4, 'MinimumReplicasUnavailable'),
      ),
      pb.varint(8, 0),
    );
    const raw = concat(pb.message(1, newMeta('api', 'prod')), pb.message(2, spec), pb.message(3, status));
    expect(decodeProtobufBody(envelope('apps/v1', 'Deployment', raw))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api', namespace: 'prod' },
      spec: {
        replicas: 0,
        selector: {
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['web', 'api'] },
            { key: 'canary', operator: 'DoesNotExist' },
          ],
        },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
        minReadySeconds: 10,
        revisionHistoryLimit: 3,
        paused: true,
        progressDeadlineSeconds: 600,
      },
      status: {
        observedGeneration: 4,
        replicas: 2,
        readyReplicas: 1,
        conditions: [
          {
            type: 'Available',
            status: 'False',
            lastUpdateTime: '2026-01-02T03:04:05Z',
            lastTransitionTime: '2026-01-02T03:04:00Z',
            reason: 'MinimumReplicasUnavailable',
          },
        ],
        collisionCount: 0,
      },
    });
  });

  it('Scale, keeping a scale to zero', () => {
    const raw = concat(
      pb.message(1, newMeta('web', 'default', [pb.string(6, '12')])),
      pb.message(2, pb.varint(1, 0)),
      pb.message(3, pb.varint(1, 2), pb.string(2, 'app=web')),
    );
    expect(decodeProtobufBody(envelope('autoscaling/v1', 'Scale', raw))).toEqual({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'web', namespace: 'default', resourceVersion: '12' },
      spec: { replicas: 0 },
      status: { replicas: 2, selector: 'app=web' },
    });
  });
});

describe('tables against the server schema', () => {
  /** JSON names a table produces that the kind's structural schema does not know. */
  function unknownNames(table: MessageTable, node: Node, path: string, out: string[]): void {
    if (node === 'any' || typeof node === 'string' || !('object' in node)) return;
    for (const spec of Object.values(table.fields)) {
      if (spec.inline) {
        unknownNames(spec.kind as MessageTable, node, path, out);
        continue;
      }
      const at = `${path}.${spec.name}`;
      if (!Object.hasOwn(node.object, spec.name)) {
        out.push(at);
        continue;
      }
      if (typeof spec.kind !== 'object' || spec.kind.unwrap !== undefined) continue;
      let child = node.object[spec.name];
      if (spec.repeated && typeof child === 'object' && 'list' in child) child = child.list;
      if (spec.map && typeof child === 'object' && 'map' in child) child = child.map;
      unknownNames(spec.kind, child, at, out);
    }
  }

  it.each(PROTOBUF_KINDS.filter((k) => k !== 'DeleteOptions'))('%s uses only field names the schema knows', (kind) => {
    const schema = schemaFor(kind);
    expect(schema).toBeDefined();
    const out: string[] = [];
    unknownNames(tableForKind(kind)!, schema!, kind, out);
    expect(out).toEqual([]);
  });
});
