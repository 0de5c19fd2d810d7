/** The reference's cell formats for Pods, Nodes, StatefulSets, claims, volumes and classes, case by case. */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from './meta.ts';
import { naming } from './naming.ts';
import {
  accessModes,
  claimCells,
  nodeAddress,
  nodeInfo,
  nodeRoles,
  nodeStatus,
  podCells,
  podIP,
  readinessGates,
  storageClassName,
  storageClassOf,
  templateContainers,
  volumeClaim,
} from './printers.ts';

const now = new Date('2026-01-01T01:00:00Z');
const obj = (fields: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject =>
  ({ metadata: { name: 'x', ...metadata }, ...fields }) as KubeObject;
const pod = (status: Record<string, unknown>, containers = 1, metadata = {}) =>
  obj({ spec: { containers: Array.from({ length: containers }, (_, i) => ({ name: `c${i}` })) }, status }, metadata);
const running = { ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } };

describe('pod Ready, Status and Restarts', () => {
  it.each([
    ['pending, nothing reported', pod({ phase: 'Pending' }), { ready: '0/1', status: 'Pending', restarts: '0' }],
    [
      'running and ready',
      pod({ phase: 'Running', containerStatuses: [running] }),
      { ready: '1/1', status: 'Running', restarts: '0' },
    ],
    [
      'one of two ready',
      pod({ phase: 'Running', containerStatuses: [running, { ready: false, state: { running: {} } }] }, 2),
      { ready: '1/2', status: 'Running', restarts: '0' },
    ],
    [
      'crash looping: the waiting reason, restarts with the last exit',
      pod({
        phase: 'Running',
        containerStatuses: [
          {
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:59:15Z' } },
          },
        ],
      }),
      { ready: '0/1', status: 'CrashLoopBackOff', restarts: '3 (45s ago)' },
    ],
    [
      'restarts summed over containers, the latest exit shown',
      pod(
        {
          phase: 'Running',
          containerStatuses: [
            { ...running, restartCount: 2, lastState: { terminated: { finishedAt: '2026-01-01T00:30:00Z' } } },
            { ...running, restartCount: 1, lastState: { terminated: { finishedAt: '2026-01-01T00:50:00Z' } } },
          ],
        },
        2,
      ),
      { ready: '2/2', status: 'Running', restarts: '3 (10m ago)' },
    ],
    [
      'terminated with a reason',
      pod({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 1, reason: 'Error' } } }] }),
      { ready: '0/1', status: 'Error', restarts: '0' },
    ],
    [
      'terminated by a signal, no reason',
      pod({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 137, signal: 9 } } }] }),
      { ready: '0/1', status: 'Signal:9', restarts: '0' },
    ],
    [
      'terminated with an exit code only',
      pod({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 2 } } }] }),
      { ready: '0/1', status: 'ExitCode:2', restarts: '0' },
    ],
    [
      'the pod reason over the phase',
      pod({ phase: 'Failed', reason: 'Evicted' }),
      { ready: '0/1', status: 'Evicted', restarts: '0' },
    ],
    [
      'an init container still running',
      pod({ phase: 'Pending', initContainerStatuses: [{ state: { running: {} } }, { state: { waiting: {} } }] }),
      { ready: '0/1', status: 'Init:0/2', restarts: '0' },
    ],
    [
      'an init container failing',
      pod({
        phase: 'Pending',
        initContainerStatuses: [
          { state: { terminated: { exitCode: 0 } } },
          { restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      }),
      { ready: '0/1', status: 'Init:CrashLoopBackOff', restarts: '2' },
    ],
    [
      'an init container that exited with an error',
      pod({ phase: 'Pending', initContainerStatuses: [{ state: { terminated: { exitCode: 3 } } }] }),
      { ready: '0/1', status: 'Init:ExitCode:3', restarts: '0' },
    ],
    [
      'completed containers beside a running one: Running when the pod is ready',
      pod(
        {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }, running],
        },
        2,
      ),
      { ready: '1/2', status: 'Running', restarts: '0' },
    ],
    [
      'completed beside running, pod not ready',
      pod(
        {
          phase: 'Running',
          containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }, running],
        },
        2,
      ),
      { ready: '1/2', status: 'NotReady', restarts: '0' },
    ],
    [
      'deleted',
      pod({ phase: 'Running', containerStatuses: [running] }, 1, { deletionTimestamp: '2026-01-01T00:59:00Z' }),
      { ready: '1/1', status: 'Terminating', restarts: '0' },
    ],
    [
      'deleted on a lost node',
      pod({ phase: 'Running', reason: 'NodeLost' }, 1, { deletionTimestamp: '2026-01-01T00:59:00Z' }),
      { ready: '0/1', status: 'Unknown', restarts: '0' },
    ],
  ])('%s', (_what, p, expected) => {
    expect(podCells(p, now)).toEqual(expected);
  });
});

describe('pod wide cells', () => {
  it.each([
    [{}, '<none>'],
    [{ podIP: '10.244.1.2' }, '10.244.1.2'],
    [{ podIP: '10.244.1.2', podIPs: [{ ip: 'fd00::2' }, { ip: '10.244.1.2' }] }, 'fd00::2'],
  ])('IP of %j is %s', (status, expected) => {
    expect(podIP(obj({ status }))).toBe(expected);
  });

  it.each([
    [[], [], '<none>'],
    [[{ conditionType: 'a' }, { conditionType: 'b' }], [{ type: 'a', status: 'True' }], '1/2'],
    [[{ conditionType: 'a' }], [{ type: 'a', status: 'False' }], '0/1'],
  ])('readiness gates %j with %j: %s', (readinessGates_, conditions, expected) => {
    expect(readinessGates(obj({ spec: { readinessGates: readinessGates_ }, status: { conditions } }))).toBe(expected);
  });
});

describe('node cells', () => {
  const n = naming('kubernetes');
  it.each([
    [{ conditions: [{ type: 'Ready', status: 'True' }] }, {}, 'Ready'],
    [{ conditions: [{ type: 'Ready', status: 'False' }] }, {}, 'NotReady'],
    [{ conditions: [{ type: 'Ready', status: 'Unknown' }] }, {}, 'NotReady'],
    [{}, {}, 'Unknown'],
    [{ conditions: [{ type: 'Ready', status: 'True' }] }, { unschedulable: true }, 'Ready,SchedulingDisabled'],
  ])('status %j spec %j: %s', (status, spec, expected) => {
    expect(nodeStatus(obj({ status, spec }))).toBe(expected);
  });

  it.each([
    [{}, '<none>'],
    [{ 'node-role.kubernetes.io/control-plane': '' }, 'control-plane'],
    [{ 'node-role.kubernetes.io/worker': '', 'node-role.kubernetes.io/control-plane': 'x' }, 'control-plane,worker'],
    [{ 'kubernetes.io/role': 'node', 'node-role.kubernetes.io/node': '' }, 'node'],
    [{ 'node-role.kubernetes.io/': '' }, '<none>'],
  ])('roles of %j: %s', (labels, expected) => {
    expect(nodeRoles(obj({}, { labels }), n.domain)).toBe(expected);
  });

  it('addresses and system info, with <none> and <unknown> when missing', () => {
    const node = obj({
      status: {
        addresses: [
          { type: 'Hostname', address: 'n1' },
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'InternalIP', address: '10.0.0.9' },
        ],
        nodeInfo: { osImage: 'Debian', kernelVersion: '', containerRuntimeVersion: 'containerd://2.0' },
      },
    });
    expect(nodeAddress(node, 'InternalIP')).toBe('10.0.0.1');
    expect(nodeAddress(node, 'ExternalIP')).toBe('<none>');
    expect(nodeInfo(node, 'osImage')).toBe('Debian');
    expect(nodeInfo(node, 'kernelVersion')).toBe('<unknown>');
    expect(nodeInfo(obj({}), 'containerRuntimeVersion')).toBe('<unknown>');
  });
});

describe('workload, claim, volume and class cells', () => {
  it('lists the template containers and images in order', () => {
    const sts = obj({
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'app', image: 'nginx' },
              { name: 'log', image: 'busybox' },
            ],
          },
        },
      },
    });
    expect(templateContainers(sts, 'name')).toBe('app,log');
    expect(templateContainers(sts, 'image')).toBe('nginx,busybox');
    expect(templateContainers(obj({}), 'name')).toBe('');
  });

  it.each([
    [['ReadWriteMany', 'ReadWriteOnce'], 'RWO,RWX'],
    [['ReadWriteOncePod', 'ReadOnlyMany', 'ReadOnlyMany'], 'ROX,RWOP'],
    [[], ''],
    [undefined, ''],
  ])('access modes %j: %j', (modes, expected) => {
    expect(accessModes(modes)).toBe(expected);
  });

  it.each([
    [
      'unbound: no capacity or modes',
      { spec: {}, status: { phase: 'Pending' } },
      {},
      { status: 'Pending', capacity: '', modes: '' },
    ],
    [
      'bound',
      {
        spec: { volumeName: 'pv-1' },
        status: { phase: 'Bound', capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'] },
      },
      {},
      { status: 'Bound', capacity: '5Gi', modes: 'RWO' },
    ],
    [
      'being deleted',
      { spec: { volumeName: 'pv-1' }, status: { phase: 'Bound', capacity: { storage: '5Gi' } } },
      { deletionTimestamp: '2026-01-01T00:00:00Z' },
      { status: 'Terminating', capacity: '5Gi', modes: '' },
    ],
  ])('claim %s', (_what, fields, metadata, expected) => {
    expect(claimCells(obj(fields, metadata))).toEqual(expected);
  });

  it('takes the class from the spec, else the beta annotation', () => {
    const beta = naming('kubernetes').annotations.betaStorageClass;
    expect(storageClassOf(obj({ spec: { storageClassName: 'fast' } }, { annotations: { [beta]: 'slow' } }), beta)).toBe(
      'fast',
    );
    expect(storageClassOf(obj({ spec: {} }, { annotations: { [beta]: 'slow' } }), beta)).toBe('slow');
    expect(storageClassOf(obj({ spec: {} }), beta)).toBe('');
  });

  it('names the claim of a volume', () => {
    expect(volumeClaim(obj({ spec: { claimRef: { namespace: 'ns', name: 'data' } } }))).toBe('ns/data');
    expect(volumeClaim(obj({ spec: {} }))).toBe('');
  });

  it.each([
    [{ a: 'true' }, 'standard (default)'],
    [{ b: 'true' }, 'standard (default)'],
    [{ a: 'True' }, 'standard'],
    [{}, 'standard'],
  ])('class annotations %j: %s', (annotations, expected) => {
    expect(storageClassName(obj({}, { name: 'standard', annotations }), ['a', 'b'])).toBe(expected);
  });
});
