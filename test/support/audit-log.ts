/** The embedded plane's audit log as tests read it: every event written so far, and who sent each. */
import { readFile } from 'node:fs/promises';
import type { AuditEvent } from '../../src/controlplane/audit.ts';
import type { TestCluster } from './cluster.ts';

/** Every event of the cluster's audit log at `path`, flushed first. */
export async function auditEvents(cluster: TestCluster, path: string): Promise<AuditEvent[]> {
  await cluster.cp.audit!.flush();
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** The daemon identity a request names in its User-Agent's parentheses. */
export const identityOf = (e: AuditEvent) => /\(([^)]+)\)/.exec(e.userAgent ?? '')?.[1];
