/** Service account user names read back into a namespace and a name (made by `src/api/service-accounts.ts`). */
import { isDNS1123Label, isDNS1123Subdomain } from '../api/dns-names.ts';
import { SERVICE_ACCOUNT_PREFIX } from '../api/service-accounts.ts';

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
