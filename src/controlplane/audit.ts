/**
 * The audit log (`--audit-log-path`): one `audit.<group>/v1` Event per line, as kube-apiserver's log
 * backend writes them. The embedded control plane has one fixed policy: every write (create, update,
 * patch, delete, deletecollection, on objects and subresources) at level Metadata, stage ResponseComplete;
 * reads are not logged. `objectRef.resourceVersion` is the resourceVersion the write produced, so a write
 * can be placed exactly in the store's history.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { group, type Naming } from '../api/naming.ts';
import { rfc3339Micro } from '../util/time.ts';
import type { UserInfo } from './admission.ts';
import type { ResourceRequest } from './request-info.ts';

export interface AuditEvent {
  apiVersion: string;
  kind: 'Event';
  level: 'Metadata';
  auditID: string;
  stage: 'ResponseComplete';
  requestURI: string;
  verb: string;
  user: { username: string; uid?: string; groups: string[] };
  sourceIPs: string[];
  userAgent?: string;
  objectRef: {
    resource: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
    apiVersion: string;
    subresource?: string;
    resourceVersion?: string;
  };
  responseStatus: { metadata: Record<string, never>; code: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  /** Set by admission (e.g. ValidatingAdmissionPolicy audit annotations); absent when none. */
  annotations?: Record<string, string>;
}

/** One finished write, as the server saw it. */
export interface AuditedWrite {
  info: ResourceRequest;
  requestURI: string;
  user: UserInfo;
  sourceIp?: string;
  userAgent?: string;
  code: number;
  /** The answer's body: a written object names the object (for creates) and the resourceVersion it got. */
  produced?: unknown;
  /** The audit annotations admission set. */
  annotations?: Record<string, string>;
  received: Date;
}

export class AuditLog {
  private readonly stream: WriteStream;
  private readonly apiVersion: string;

  constructor(
    readonly path: string,
    naming: Naming,
  ) {
    this.stream = createWriteStream(path, { flags: 'a' });
    this.apiVersion = `${group(naming, 'audit')}/v1`;
  }

  record(w: AuditedWrite): void {
    const { rt, namespace, name, subresource, verb } = w.info;
    const written = (w.produced as { metadata?: { name?: string; resourceVersion?: string } } | undefined)?.metadata;
    const event: AuditEvent = {
      apiVersion: this.apiVersion,
      kind: 'Event',
      level: 'Metadata',
      auditID: randomUUID(),
      stage: 'ResponseComplete',
      requestURI: w.requestURI,
      verb,
      user: { username: w.user.username, uid: w.user.uid, groups: w.user.groups },
      sourceIPs: w.sourceIp ? [w.sourceIp] : [],
      userAgent: w.userAgent,
      objectRef: {
        resource: rt.plural,
        namespace,
        name: name ?? written?.name,
        apiGroup: rt.group || undefined,
        apiVersion: rt.version,
        subresource,
        resourceVersion: written?.resourceVersion,
      },
      responseStatus: { metadata: {}, code: w.code },
      requestReceivedTimestamp: rfc3339Micro(w.received),
      stageTimestamp: rfc3339Micro(new Date()),
    };
    if (w.annotations && Object.keys(w.annotations).length) event.annotations = w.annotations;
    this.stream.write(`${JSON.stringify(event)}\n`);
  }

  /** Resolves once every event recorded so far is in the file. */
  flush(): Promise<void> {
    return new Promise((resolve, reject) => this.stream.write('', (err) => (err ? reject(err) : resolve())));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }
}
