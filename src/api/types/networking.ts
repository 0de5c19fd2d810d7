/** `networking.<group suffix>/v1` shapes as raw JSON: IngressClass. */
import type { KubeObject } from '../meta.ts';

export interface IngressClassParametersReference {
  /** If unset, `kind` must be in the core group; required for other types. */
  apiGroup?: string;
  kind: string;
  name: string;
  /** `Cluster` (default) or `Namespace`. */
  scope?: 'Cluster' | 'Namespace';
  /** Required when scope is `Namespace`; must be unset when scope is `Cluster`. */
  namespace?: string;
}

export interface IngressClassSpec {
  /** Controller handling this class: a domain-prefixed path of at most 250 characters; immutable. */
  controller?: string;
  /** Optional link to a resource with extra controller configuration. */
  parameters?: IngressClassParametersReference;
}

/**
 * Names the controller that handles an ingress (spec §2.3). Cluster-scoped. The `is-default-class`
 * annotation set to `true` on exactly one class makes it the default for new ingresses without a class.
 */
export interface IngressClass extends KubeObject {
  spec?: IngressClassSpec;
}
