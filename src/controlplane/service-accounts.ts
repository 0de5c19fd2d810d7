/** The identities of service accounts: `system:serviceaccount:<namespace>:<name>` in the groups of their namespace. */
import { isDNS1123Label, isDNS1123Subdomain } from './validation/common.ts';

export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;
}

/** `system:serviceaccounts` and `system:serviceaccounts:<namespace>`, as the reference gives every service account. */
export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`];
}

/**
 * The namespace and name of a service account user name, or undefined when the name is not one: exactly two
 * parts after the prefix, a valid namespace name and a valid service account name, as the reference splits it.
 */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts;
  if (isDNS1123Label(namespace).length || isDNS1123Subdomain(name).length) return undefined;
  return { namespace, name };
}
