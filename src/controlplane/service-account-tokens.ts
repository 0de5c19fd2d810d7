/**
 * Bound service account tokens, as the reference issues them through `serviceaccounts/<name>/token`
 * (TokenRequest) and checks them as bearer tokens and in TokenReviews: ES256 JWTs signed by the control plane's
 * service account key, for a list of audiences (the API server's own by default), expiring after
 * `expirationSeconds` (default one hour, at least ten minutes, at most 2^32 seconds), optionally bound to a Pod,
 * Secret or Node. A token stays valid only while its service account, and its bound object, still exist with the
 * uids it was issued for.
 */
import { createHash, createPublicKey, type KeyObject, randomUUID, sign, verify } from 'node:crypto';
import { invalid as fieldInvalid } from '../api/field-errors.ts';
import type { KubeObject } from '../api/meta.ts';
import { FLAVORS, group, type Naming, naming } from '../api/naming.ts';
import { serviceAccountGroups, serviceAccountUsername } from '../api/service-accounts.ts';
import { rfc3339 } from '../util/time.ts';
import type { UserInfo } from './admission.ts';
import type { SubresourceHandler } from './api.ts';
import { recordUpdate } from './apply/managed-fields.ts';
import { decodeKindBody } from './decode.ts';
import { badRequest, conflict, type FieldProblem, invalid, methodNotAllowed, notFound } from './errors.ts';

const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const BINDABLE_KINDS = ['Pod', 'Secret', 'Node'];

/** Reads one object of a core kind (`ServiceAccount`, `Pod`, `Secret`, `Node`); namespace empty for nodes. */
export type ObjectReader = (kind: string, namespace: string, name: string) => KubeObject | undefined;

export interface ServiceAccountTokenOptions {
  /** The private half of the service account signing key (P-256). */
  key: KeyObject;
  issuer: string;
  /** What tokens are for when a request names no audience: the API server itself. */
  apiAudiences: string[];
  naming: Naming;
  /** Where service accounts and bound objects are looked up when a token is checked. */
  read: ObjectReader;
  now: () => Date;
}

interface Ref {
  name: string;
  uid: string;
}

interface Claims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  [privateClaims: string]: unknown;
}

/** The private claims under the flavor's domain: namespace, service account and the bound object. */
interface BindingClaims {
  namespace: string;
  serviceaccount: Ref;
  pod?: Ref;
  secret?: Ref;
  node?: Ref;
}

export interface TokenAuthentication {
  user: UserInfo;
  /** The audiences asked for that the token is valid for. */
  audiences: string[];
}

export class ServiceAccountTokens {
  private readonly publicKey: KeyObject;
  private readonly keyId: string;

  constructor(private readonly opts: ServiceAccountTokenOptions) {
    this.publicKey = createPublicKey(opts.key);
    // As the reference: the key id is the unpadded base64url SHA-256 of the public key's DER form.
    const der = this.publicKey.export({ type: 'spki', format: 'der' });
    this.keyId = createHash('sha256').update(der).digest('base64url');
  }

  get apiAudiences(): string[] {
    return this.opts.apiAudiences;
  }

  /** Signs a token for a service account, valid from now for `seconds`. */
  issue(
    sa: KubeObject,
    audiences: string[],
    seconds: number,
    bound?: { kind: string; name: string; uid: string },
  ): { token: string; expires: Date } {
    const now = Math.floor(this.opts.now().getTime() / 1000);
    const namespace = sa.metadata.namespace ?? '';
    const binding: BindingClaims = {
      namespace,
      serviceaccount: { name: sa.metadata.name ?? '', uid: sa.metadata.uid ?? '' },
    };
    if (bound) binding[bound.kind.toLowerCase() as 'pod' | 'secret' | 'node'] = { name: bound.name, uid: bound.uid };
    const claims: Claims = {
      iss: this.opts.issuer,
      sub: serviceAccountUsername(namespace, binding.serviceaccount.name),
      aud: audiences,
      exp: now + seconds,
      iat: now,
      nbf: now,
      jti: randomUUID(),
      [this.opts.naming.domain]: binding,
    };
    const header = { alg: 'ES256', kid: this.keyId };
    const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
    const signature = sign('sha256', Buffer.from(unsigned), { key: this.opts.key, dsaEncoding: 'ieee-p1363' });
    return { token: `${unsigned}.${signature.toString('base64url')}`, expires: new Date((now + seconds) * 1000) };
  }

  /**
   * The service account a token authenticates for one of `audiences` (the API audiences when empty), or
   * undefined when it is not a valid token of this issuer: bad signature, expired, another audience, or a
   * service account or bound object deleted (or recreated) since.
   */
  authenticate(token: string, audiences: string[] = []): TokenAuthentication | undefined {
    const claims = this.verifiedClaims(token);
    if (!claims) return undefined;
    const wanted = audiences.length ? audiences : this.opts.apiAudiences;
    const granted = wanted.filter((a) => claims.aud.includes(a));
    if (granted.length === 0) return undefined;
    const binding = claims[this.opts.naming.domain] as BindingClaims | undefined;
    if (!binding?.serviceaccount || typeof binding.namespace !== 'string') return undefined;
    const { namespace } = binding;
    if (!this.stillExists('ServiceAccount', namespace, binding.serviceaccount)) return undefined;
    const extra: Record<string, string[]> = { [this.extraKey('credential-id')]: [`JTI=${claims.jti}`] };
    for (const kind of BINDABLE_KINDS) {
      const key = kind.toLowerCase() as 'pod' | 'secret' | 'node';
      const ref = binding[key];
      if (!ref) continue;
      if (!this.stillExists(kind, kind === 'Node' ? '' : namespace, ref)) return undefined;
      if (kind !== 'Secret') {
        extra[this.extraKey(`${key}-name`)] = [ref.name];
        extra[this.extraKey(`${key}-uid`)] = [ref.uid];
      }
    }
    return {
      user: {
        username: claims.sub,
        uid: binding.serviceaccount.uid,
        groups: serviceAccountGroups(namespace),
        extra,
      },
      audiences: granted,
    };
  }

  private verifiedClaims(token: string): Claims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [header, payload, signature] = parts;
    let claims: Claims;
    try {
      const h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
      if (h?.alg !== 'ES256') return undefined;
      const valid = verify(
        'sha256',
        Buffer.from(`${header}.${payload}`),
        { key: this.publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      );
      if (!valid) return undefined;
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const now = this.opts.now().getTime() / 1000;
    if (claims.iss !== this.opts.issuer || !Array.isArray(claims.aud)) return undefined;
    if (!(claims.exp > now) || !(claims.nbf <= now)) return undefined;
    return claims;
  }

  private stillExists(kind: string, namespace: string, ref: Ref): boolean {
    const obj = this.opts.read(kind, namespace, ref.name);
    return obj !== undefined && obj.metadata.uid === ref.uid && !obj.metadata.deletionTimestamp;
  }

  private extraKey(name: string): string {
    return `authentication.${this.opts.naming.domain}/${name}`;
  }
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

// ---------------------------------------------------------------------------------------------
// POST serviceaccounts/<name>/token

interface TokenRequestSpec {
  audiences?: unknown;
  expirationSeconds?: unknown;
  boundObjectRef?: { kind?: unknown; apiVersion?: unknown; name?: unknown; uid?: unknown } | null;
}

/** The `serviceaccounts/token` handler: validates a TokenRequest and answers it with a signed token. */
export function tokenRequestHandler(tokens: ServiceAccountTokens, read: ObjectReader): SubresourceHandler {
  return async (api, req, query, body, user) => {
    if (req.verb !== 'create') throw methodNotAllowed();
    const authentication = group(api.naming, 'authentication');
    const apiVersion = `${authentication}/v1`;
    // kubectl writes the reference's group whatever the flavor: every flavor's spelling is accepted, this one
    // first, and the answer is in the spelling asked for, which is the one the client can decode.
    const accepted = [apiVersion, ...FLAVORS.map((f) => `${group(naming(f), 'authentication')}/v1`)];
    const request = decodeKindBody(body, 'TokenRequest', accepted) as KubeObject & { spec?: TokenRequestSpec };
    const answerVersion = request.apiVersion ?? apiVersion;
    const name = req.name ?? '';
    const namespace = req.namespace ?? '';
    if (request.metadata.name && request.metadata.name !== name) {
      throw badRequest('name in URL does not match name in TokenRequest body');
    }
    if (request.metadata.namespace && request.metadata.namespace !== namespace) {
      throw badRequest('namespace in URL does not match namespace in TokenRequest body');
    }
    const spec = request.spec ?? {};
    if (typeof spec !== 'object' || Array.isArray(spec)) throw badRequest('spec must be an object');
    const audiences = spec.audiences ?? [];
    if (!Array.isArray(audiences) || audiences.some((a) => typeof a !== 'string')) {
      throw badRequest('spec.audiences must be a list of strings');
    }
    const seconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
    if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds)) {
      throw badRequest(`spec.expirationSeconds must be an integer number of seconds, not ${JSON.stringify(seconds)}`);
    }
    const problems = validateExpiration(seconds);
    // The reference names no object in this error, whatever the URL names.
    if (problems.length)
      throw invalid({ group: authentication, plural: 'tokenrequests', kind: 'TokenRequest' }, '', problems);
    // Admission (NodeRestriction: a node's token must be bound to a pod of its own) before anything is issued.
    await api.admitSubresource(req, request, user, false);
    const sa = read('ServiceAccount', namespace, name);
    if (!sa) throw notFound(req.rt, name);
    const bound = spec.boundObjectRef ? boundObject(spec.boundObjectRef, namespace, read) : undefined;
    const granted = audiences.length ? (audiences as string[]) : tokens.apiAudiences;
    const { token, expires } = tokens.issue(sa, granted, seconds, bound);
    // As the reference's create handler: the fields the request sets (its lifetime defaulted as decoding does) are
    // the caller's, and the answer is a new object of its own.
    const owner = api.subresourceOwner(req, query, body, 'TokenRequest', answerVersion);
    const managedFields = recordUpdate(undefined, { spec: { ...spec, expirationSeconds: seconds } }, owner);
    const answer: Record<string, unknown> = { audiences: granted, expirationSeconds: seconds, boundObjectRef: null };
    if (bound) answer.boundObjectRef = { kind: bound.kind, apiVersion: 'v1', name: bound.name, uid: bound.uid };
    return {
      status: 201,
      body: {
        apiVersion: answerVersion,
        kind: 'TokenRequest',
        metadata: { name, namespace, uid: randomUUID(), creationTimestamp: rfc3339(api.options.now()), managedFields },
        spec: answer,
        status: { token, expirationTimestamp: rfc3339(expires) },
      },
      warnings: [],
    };
  };
}

/** The reference's bounds on a token's lifetime. */
function validateExpiration(seconds: number): FieldProblem[] {
  const path = 'spec.expirationSeconds';
  if (seconds < MIN_EXPIRATION_SECONDS)
    return [fieldInvalid(path, seconds, 'may not specify a duration less than 10 minutes')];
  if (seconds > MAX_EXPIRATION_SECONDS)
    return [fieldInvalid(path, seconds, 'may not specify a duration larger than 2^32 seconds')];
  return [];
}

/** The object a token is bound to: a Pod, Secret (in the service account's namespace) or Node that exists with the uid given. */
function boundObject(
  ref: NonNullable<TokenRequestSpec['boundObjectRef']>,
  namespace: string,
  read: ObjectReader,
): { kind: string; name: string; uid: string } {
  const { kind, name, uid } = ref;
  if (typeof kind !== 'string' || !BINDABLE_KINDS.includes(kind)) {
    throw badRequest(`cannot bind token to object of type ${String(kind)}`);
  }
  if (ref.apiVersion !== undefined && ref.apiVersion !== 'v1') {
    throw badRequest(`cannot bind token to object of type ${String(ref.apiVersion)}, Kind=${kind}`);
  }
  if (typeof name !== 'string' || !name) throw badRequest('spec.boundObjectRef.name is required');
  const plural = `${kind.toLowerCase()}s`;
  const obj = read(kind, kind === 'Node' ? '' : namespace, name);
  if (!obj) throw notFound({ group: '', plural }, name);
  const actual = obj.metadata.uid ?? '';
  if (uid !== undefined && uid !== '' && uid !== actual) {
    throw conflict(
      { group: '', plural: kind },
      name,
      `the UID in the bound object reference (${String(uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return { kind, name, uid: actual };
}
