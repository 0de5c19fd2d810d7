/** Output as kubectl writes it: `-o json|yaml|name`, `<resource>.<group>/<name> <verb>`, and its error lines. */
import { stringify } from 'yaml';
import type { KubeObject } from '../../api/meta.ts';
import type { ResourceType } from '../../api/registry.ts';
import { StatusError } from '../../client/errors.ts';

export type OutputFormat = '' | 'json' | 'yaml' | 'name';

export function outputFormat(value: string | undefined, allowed: readonly OutputFormat[]): OutputFormat {
  const format = (value ?? '') as OutputFormat;
  if (!allowed.includes(format)) {
    throw new UsageError(
      `unable to match a printer suitable for the output format "${value}", allowed formats are: ${allowed.filter(Boolean).join(',')}`,
    );
  }
  return format;
}

/** A mistake in the command line: kubectl prints it as `error: ...` and exits 1. */
export class UsageError extends Error {}

/** `certificatesigningrequest.certificates.k8s.io/name`, as `-o name` and the success lines spell it. */
export function qualifiedName(rt: ResourceType, name: string | undefined): string {
  return `${rt.singular}${rt.group ? `.${rt.group}` : ''}/${name ?? ''}`;
}

/** Prints an object by format; `operation` is the verb of the default line (`created`, `approved`). */
export function printObject(rt: ResourceType, obj: KubeObject, format: OutputFormat, operation: string): string {
  if (format === 'json') return `${JSON.stringify(obj, null, 4)}\n`;
  if (format === 'yaml') return stringify(obj);
  if (format === 'name') return `${qualifiedName(rt, obj.metadata.name)}\n`;
  return `${qualifiedName(rt, obj.metadata.name)} ${operation}\n`;
}

/** kubectl's error line: `Error from server (Reason): message` for API refusals, `error: message` otherwise. */
export function errorLine(err: unknown): string {
  if (err instanceof StatusError) return `Error from server (${err.reason || 'Unknown'}): ${err.message}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/** Rows aligned in columns three spaces apart, as kubectl's tab writer does. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + 3)))
        .join('')
        .trimEnd(),
    )
    .join('\n')
    .concat('\n');
}

/** Go's `fmt.Sprint` of a string slice: `[a b]`. */
export const goList = (items: readonly string[] | undefined): string => `[${(items ?? []).join(' ')}]`;
