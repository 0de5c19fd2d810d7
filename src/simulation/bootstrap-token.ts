/**
 * Bootstrap tokens as an installer creates them: a Secret `bootstrap-token-<id>` of type
 * `bootstrap.<domain>/token` in the system namespace, whose token `<id>.<secret>` authenticates as
 * `system:bootstrap:<id>` in `system:bootstrappers` (and any extra `system:bootstrappers:...` groups).
 */
import { randomInt } from 'node:crypto';
import type { KubeObject } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import type { KubeClient } from '../client/client.ts';
import { rfc3339 } from '../util/time.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

const random = (length: number) => Array.from({ length }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

export interface BootstrapToken {
  id: string;
  secret: string;
  /** `<id>.<secret>`, the bearer token. */
  token: string;
  /** The Secret holding it. */
  object: KubeObject;
}

export interface BootstrapTokenOptions {
  /** Valid for this long; no expiry when unset. */
  ttlMs?: number;
  /** Extra groups, each `system:bootstrappers:...`. */
  extraGroups?: string[];
  description?: string;
}

/** The Secret for a new random bootstrap token. */
export function bootstrapTokenSecret(n: Naming, opts: BootstrapTokenOptions = {}, now = new Date()): BootstrapToken {
  const id = random(6);
  const secret = random(16);
  const data: Record<string, string> = {
    'token-id': id,
    'token-secret': secret,
    'usage-bootstrap-authentication': 'true',
    'usage-bootstrap-signing': 'true',
  };
  if (opts.ttlMs !== undefined) data.expiration = rfc3339(new Date(now.getTime() + opts.ttlMs));
  if (opts.extraGroups?.length) data['auth-extra-groups'] = opts.extraGroups.join(',');
  if (opts.description) data.description = opts.description;
  const object: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: n.systemNamespace },
    type: `bootstrap.${n.domain}/token`,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
  return { id, secret, token: `${id}.${secret}`, object };
}

/** Creates a bootstrap token through the API (as an administrator). */
export async function createBootstrapToken(
  client: KubeClient,
  opts: BootstrapTokenOptions = {},
): Promise<BootstrapToken> {
  const t = bootstrapTokenSecret(client.registry.naming, opts);
  await client.kind('Secret').create(t.object);
  return t;
}
