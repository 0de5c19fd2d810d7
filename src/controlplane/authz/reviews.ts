/**
 * The review resources, answered on create and never stored: SubjectAccessReview, LocalSubjectAccessReview,
 * SelfSubjectAccessReview and SelfSubjectRulesReview (evaluated by the authorizer that guards requests),
 * TokenReview (tokens the control plane knows) and SelfSubjectReview. Validation and answers follow the
 * reference: access reviews come back as the request with `status` filled, rules and self reviews as new objects.
 */

import { invalid as invalidField } from '../../api/field-errors.ts';
import type { KubeObject } from '../../api/meta.ts';
import { group, type Naming } from '../../api/naming.ts';
import { apiVersionOf, type ResourceType } from '../../api/registry.ts';
import type {
  NonResourceAttributes,
  UserInfo as ReviewUserInfo,
  SubjectAccessReviewSpec,
  SubjectAccessReviewStatus,
  TokenReviewStatus,
} from '../../api/types/index.ts';
import { rfc3339 } from '../../util/time.ts';
import type { UserInfo } from '../admission.ts';
import { AUTHENTICATED_GROUP } from '../authn.ts';
import { ApiError, badRequest, type FieldProblem, invalid } from '../errors.ts';
import type { AuthorizationAttributes, Authorizer, ResourceRequestAttributes } from './rbac.ts';

export type Reviewer = (rt: ResourceType, obj: KubeObject, user: UserInfo) => Promise<KubeObject>;

export interface ReviewerOptions {
  /** Evaluates access and rules reviews; the same authorizer that guards requests. */
  authorizer: Authorizer;
  naming: Naming;
  /** Resolves a bearer token to its user; without it, TokenReviews are returned unevaluated. */
  lookup?: (token: string) => UserInfo | undefined;
  /**
   * Audience-aware tokens (bound service account tokens) and the API server's own audiences. Tokens `lookup`
   * knows are valid for the API audiences only, as the reference treats audience-agnostic authenticators.
   */
  audiences?: {
    api: string[];
    authenticate: (token: string, audiences: string[]) => { user: UserInfo; audiences: string[] } | undefined;
  };
  now?: () => Date;
}

/** The `ApiServer.reviewer` answering every review resource of the flavor. */
export function createReviewer(options: ReviewerOptions): Reviewer {
  const { authorizer, naming } = options;
  const now = options.now ?? (() => new Date());
  const authorization = group(naming, 'authorization');
  const authentication = group(naming, 'authentication');
  return async (rt, obj, user) => {
    const kind = rt.group === authorization || rt.group === authentication ? rt.kind : '';
    switch (kind) {
      case 'SubjectAccessReview':
        return subjectAccessReview(rt, obj, authorizer);
      case 'LocalSubjectAccessReview':
        return localSubjectAccessReview(rt, obj, authorizer);
      case 'SelfSubjectAccessReview':
        return selfSubjectAccessReview(rt, obj, user, authorizer);
      case 'SelfSubjectRulesReview':
        return selfSubjectRulesReview(rt, obj, user, authorizer);
      case 'TokenReview':
        return tokenReview(obj, options);
      case 'SelfSubjectReview':
        return selfSubjectReview(rt, user, now());
      default:
        throw new ApiError(405, 'MethodNotAllowed', `${rt.plural} are not served`);
    }
  };
}

// ---------------------------------------------------------------------------------------------
// access reviews

interface AccessReview extends KubeObject {
  spec?: SubjectAccessReviewSpec;
  status?: SubjectAccessReviewStatus;
}

/**
 * The reference names an access review's Invalid error by the decoded object's kind, which its internal form
 * leaves empty: `.authorization.k8s.io "" is invalid`, no kind in the details.
 */
const withoutKind = (rt: ResourceType): ResourceType => ({ ...rt, kind: '' });

function subjectAccessReview(rt: ResourceType, obj: KubeObject, authorizer: Authorizer): KubeObject {
  const review = obj as AccessReview;
  const spec = review.spec ?? {};
  const problems = [...validateAttributesChoice(spec), ...validateSubject(spec)];
  if (!metadataEmpty(review.metadata)) problems.push(invalidField('metadata', review.metadata, 'must be empty'));
  if (problems.length) throw invalid(withoutKind(rt), '', problems);
  return answer(review, authorizer, subjectOf(spec), spec);
}

function localSubjectAccessReview(rt: ResourceType, obj: KubeObject, authorizer: Authorizer): KubeObject {
  const review = obj as AccessReview;
  const spec = review.spec ?? {};
  const namespace = review.metadata.namespace ?? '';
  const problems = [...validateAttributesChoice(spec), ...validateSubject(spec)];
  if (!metadataEmpty(review.metadata, 'namespace')) {
    problems.push(invalidField('metadata', review.metadata, 'must be empty except for namespace'));
  }
  if (spec.resourceAttributes && (spec.resourceAttributes.namespace ?? '') !== namespace) {
    problems.push(
      invalidField(
        'spec.resourceAttributes.namespace',
        spec.resourceAttributes.namespace ?? '',
        'must match metadata.namespace',
      ),
    );
  }
  if (spec.nonResourceAttributes) {
    problems.push(
      invalidField(
        'spec.nonResourceAttributes',
        nonResourceJson(spec.nonResourceAttributes),
        'disallowed on this kind of request',
      ),
    );
  }
  if (problems.length) throw invalid(withoutKind(rt), '', problems);
  if (!namespace) throw badRequest('namespace is required on this type: ');
  return answer(review, authorizer, subjectOf(spec), spec);
}

function selfSubjectAccessReview(
  rt: ResourceType,
  obj: KubeObject,
  user: UserInfo,
  authorizer: Authorizer,
): KubeObject {
  const review = obj as AccessReview;
  const spec = review.spec ?? {};
  const problems = validateAttributesChoice(spec);
  if (!metadataEmpty(review.metadata)) problems.push(invalidField('metadata', review.metadata, 'must be empty'));
  if (problems.length) throw invalid(withoutKind(rt), '', problems);
  return answer(review, authorizer, user, spec);
}

/** Fills `status` from the authorizer's decision; RBAC never denies outright, so `denied` stays unset. */
function answer(
  review: AccessReview,
  authorizer: Authorizer,
  subject: UserInfo,
  spec: Pick<SubjectAccessReviewSpec, 'resourceAttributes' | 'nonResourceAttributes'>,
): KubeObject {
  const decision = authorizer.authorize(subject, attributesOf(spec));
  const status: SubjectAccessReviewStatus = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  review.status = status;
  return review;
}

/** The attributes a review asks about; call only after validation (exactly one kind of attributes). */
export function attributesOf(
  spec: Pick<SubjectAccessReviewSpec, 'resourceAttributes' | 'nonResourceAttributes'>,
): AuthorizationAttributes {
  const r = spec.resourceAttributes;
  if (!r) return { verb: spec.nonResourceAttributes?.verb ?? '', path: spec.nonResourceAttributes?.path ?? '' };
  const attrs: ResourceRequestAttributes = { verb: r.verb ?? '', group: r.group ?? '', resource: r.resource ?? '' };
  if (r.subresource) attrs.subresource = r.subresource;
  if (r.namespace) attrs.namespace = r.namespace;
  if (r.name) attrs.name = r.name;
  return attrs;
}

function subjectOf(spec: SubjectAccessReviewSpec): UserInfo {
  const subject: UserInfo = { username: spec.user ?? '', groups: spec.groups ?? [] };
  if (spec.uid) subject.uid = spec.uid;
  if (spec.extra) subject.extra = spec.extra;
  return subject;
}

function validateAttributesChoice(spec: Pick<SubjectAccessReviewSpec, 'resourceAttributes' | 'nonResourceAttributes'>) {
  const problems: FieldProblem[] = [];
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    problems.push(
      invalidField(
        'spec.nonResourceAttributes',
        nonResourceJson(spec.nonResourceAttributes),
        'cannot be specified in combination with resourceAttributes',
      ),
    );
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    problems.push(
      invalidField('spec', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'),
    );
  }
  return problems;
}

function validateSubject(spec: SubjectAccessReviewSpec): FieldProblem[] {
  if (spec.user || spec.groups?.length) return [];
  return [invalidField('spec.user', spec.user ?? '', 'at least one of user or group must be specified')];
}

// ---------------------------------------------------------------------------------------------
// rules, token and self reviews

function selfSubjectRulesReview(rt: ResourceType, obj: KubeObject, user: UserInfo, authorizer: Authorizer): KubeObject {
  const namespace = (obj as { spec?: { namespace?: string } }).spec?.namespace ?? '';
  if (!namespace) throw badRequest('no namespace on request');
  return {
    apiVersion: apiVersionOf(rt),
    kind: rt.kind,
    metadata: {},
    spec: {},
    status: authorizer.rulesFor(user, namespace),
  } as KubeObject;
}

/** The reference reviews a token as a request's bearer token: one no authenticator knows is this error. */
const INVALID_TOKEN = 'invalid bearer token';

function tokenReview(obj: KubeObject, options: Pick<ReviewerOptions, 'lookup' | 'audiences'>): KubeObject {
  const review = obj as KubeObject & { spec?: { token?: string; audiences?: string[] }; status?: TokenReviewStatus };
  if (review.metadata.namespace)
    throw badRequest(`namespace is not allowed on this type: ${review.metadata.namespace}`);
  const token = review.spec?.token ?? '';
  if (!token) throw badRequest('token is required for TokenReview in authentication');
  const { lookup, audiences } = options;
  if (!lookup) return review;
  const requested = review.spec?.audiences ?? [];
  if (!Array.isArray(requested) || requested.some((a) => typeof a !== 'string')) {
    throw badRequest('spec.audiences must be a list of strings');
  }
  const api = audiences?.api ?? [];
  const wanted = requested.length ? requested : api;
  let found = audiences?.authenticate(token, wanted);
  if (!found) {
    const user = lookup(token);
    const granted = api.length ? wanted.filter((a) => api.includes(a)) : wanted;
    if (user && (granted.length || !api.length)) found = { user, audiences: granted };
  }
  review.status = found
    ? {
        authenticated: true,
        user: userInfoOf(withAuthenticated(found.user)),
        ...(found.audiences.length ? { audiences: found.audiences } : {}),
      }
    : { user: {}, error: INVALID_TOKEN };
  return review;
}

function selfSubjectReview(rt: ResourceType, user: UserInfo, now: Date): KubeObject {
  return {
    apiVersion: apiVersionOf(rt),
    kind: rt.kind,
    metadata: { creationTimestamp: rfc3339(now) },
    status: { userInfo: userInfoOf(user) },
  } as KubeObject;
}

function withAuthenticated(user: UserInfo): UserInfo {
  return user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

/** A user as the authentication API writes it: empty fields left out. */
function userInfoOf(user: UserInfo): ReviewUserInfo {
  const info: ReviewUserInfo = { username: user.username };
  if (user.uid) info.uid = user.uid;
  if (user.groups.length) info.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) info.extra = structuredClone(user.extra);
  return info;
}

// ---------------------------------------------------------------------------------------------
// helpers

/** NonResourceAttributes in their serialized field order. */
function nonResourceJson(a: NonResourceAttributes): NonResourceAttributes {
  const out: NonResourceAttributes = {};
  if (a.path) out.path = a.path;
  if (a.verb) out.verb = a.verb;
  return out;
}

/** Whether object metadata is empty apart from `except` and managedFields (null, zero and empty values count as unset). */
function metadataEmpty(meta: KubeObject['metadata'] | undefined, except?: string): boolean {
  return Object.entries(meta ?? {}).every(
    ([k, v]) =>
      k === except ||
      k === 'managedFields' ||
      v === undefined ||
      v === null ||
      v === '' ||
      v === 0 ||
      v === false ||
      (Array.isArray(v) && v.length === 0) ||
      (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0),
  );
}
