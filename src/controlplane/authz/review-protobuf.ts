/**
 * Protobuf field tables of the review kinds, for the protobuf request decoder (`../protobuf`): kubectl's
 * typed clients post SelfSubjectAccessReview (`auth can-i`), SelfSubjectRulesReview (`auth can-i --list`)
 * and SelfSubjectReview (`auth whoami`) as `application/vnd.kubernetes.protobuf`, and other clients may
 * post the rest the same way. Field numbers are those of the reference's `generated.proto` files of the
 * `authorization/v1` and `authentication/v1` API packages. Statuses are answers, so they are not decoded.
 */
import { field, list, type MessageTable, mapOf, message } from '../protobuf/schema.ts';
import { ExtraValue, LabelSelectorRequirement, ObjectMeta } from '../protobuf/tables.ts';

const FieldSelectorRequirement = message('FieldSelectorRequirement', {
  1: field('key', 'string'),
  2: field('operator', 'string'),
  3: list('values', 'string'),
});

const FieldSelectorAttributes = message('FieldSelectorAttributes', {
  1: field('rawSelector', 'string'),
  2: list('requirements', FieldSelectorRequirement),
});

const LabelSelectorAttributes = message('LabelSelectorAttributes', {
  1: field('rawSelector', 'string'),
  2: list('requirements', LabelSelectorRequirement),
});

const ResourceAttributes = message('ResourceAttributes', {
  1: field('namespace', 'string'),
  2: field('verb', 'string'),
  3: field('group', 'string'),
  4: field('version', 'string'),
  5: field('resource', 'string'),
  6: field('subresource', 'string'),
  7: field('name', 'string'),
  8: field('fieldSelector', FieldSelectorAttributes),
  9: field('labelSelector', LabelSelectorAttributes),
});

const NonResourceAttributes = message('NonResourceAttributes', {
  1: field('path', 'string'),
  2: field('verb', 'string'),
});

const SelfSubjectAccessReviewSpec = message('SelfSubjectAccessReviewSpec', {
  1: field('resourceAttributes', ResourceAttributes),
  2: field('nonResourceAttributes', NonResourceAttributes),
});

const SubjectAccessReviewSpec = message('SubjectAccessReviewSpec', {
  1: field('resourceAttributes', ResourceAttributes),
  2: field('nonResourceAttributes', NonResourceAttributes),
  3: field('user', 'string'),
  4: list('groups', 'string'),
  5: mapOf('extra', ExtraValue),
  6: field('uid', 'string'),
});

const withSpec = (name: string, spec?: MessageTable): MessageTable =>
  message(
    name,
    spec ? { 1: field('metadata', ObjectMeta), 2: field('spec', spec) } : { 1: field('metadata', ObjectMeta) },
  );

/** The review kinds' tables, by kind (the envelope carries the flavor's apiVersion). */
export const REVIEW_PROTOBUF_TABLES: Readonly<Record<string, MessageTable>> = {
  SubjectAccessReview: withSpec('SubjectAccessReview', SubjectAccessReviewSpec),
  LocalSubjectAccessReview: withSpec('LocalSubjectAccessReview', SubjectAccessReviewSpec),
  SelfSubjectAccessReview: withSpec('SelfSubjectAccessReview', SelfSubjectAccessReviewSpec),
  SelfSubjectRulesReview: withSpec(
    'SelfSubjectRulesReview',
    message('SelfSubjectRulesReviewSpec', { 1: field('namespace', 'string') }),
  ),
  TokenReview: withSpec(
    'TokenReview',
    message('TokenReviewSpec', { 1: field('token', 'string'), 2: list('audiences', 'string') }),
  ),
  SelfSubjectReview: withSpec('SelfSubjectReview'),
};

/** The table of a review kind; undefined for other kinds. */
export function reviewTableForKind(kind: string): MessageTable | undefined {
  return Object.hasOwn(REVIEW_PROTOBUF_TABLES, kind) ? REVIEW_PROTOBUF_TABLES[kind] : undefined;
}
