/**
 * The platform's authorizer library: `authorizer.group('apps').resource('deployments').namespace('ns')
 * .name('x').check('delete').allowed()`, `authorizer.path('/healthz').check('get')`,
 * `authorizer.serviceAccount(ns, name)` and `authorizer.requestResource` (the resource of the request
 * being admitted). Checks go to the API server's authorizer for the requesting user.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { serviceAccountGroups, serviceAccountUsername } from '../../api/service-accounts.ts';
import { charge } from '../values.ts';

const P = 'kubernetes.authorization';
export const AUTHORIZER_TYPE = `${P}.Authorizer`;

export interface AuthorizerUser {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export type AuthorizeFn = (
  user: AuthorizerUser,
  attrs: ResourceAttributes | { verb: string; path: string },
) => { allowed: boolean; reason: string };

export class Decision {
  constructor(
    readonly allowed: boolean,
    readonly reason: string,
    readonly error: string,
  ) {}
}

export class Authorizer {
  readonly requestResource: ResourceCheck;
  constructor(
    readonly user: AuthorizerUser,
    readonly authorize: AuthorizeFn,
    request: Omit<ResourceAttributes, 'verb'>,
  ) {
    this.requestResource = new ResourceCheck(this, request);
  }

  decide(attrs: Parameters<AuthorizeFn>[1]): Decision {
    charge();
    try {
      const d = this.authorize(this.user, attrs);
      return new Decision(d.allowed, d.reason, '');
    } catch (err) {
      return new Decision(false, '', (err as Error).message);
    }
  }
}

export class GroupCheck {
  constructor(
    readonly authz: Authorizer,
    readonly group: string,
  ) {}
}

export class PathCheck {
  constructor(
    readonly authz: Authorizer,
    readonly path: string,
  ) {}
}

export class ResourceCheck {
  constructor(
    readonly authz: Authorizer,
    readonly attrs: Omit<ResourceAttributes, 'verb'>,
  ) {}

  with(field: 'subresource' | 'namespace' | 'name', value: string): ResourceCheck {
    return new ResourceCheck(this.authz, { ...this.attrs, [field]: value });
  }
}

const serviceAccount = (ns: string, name: string): AuthorizerUser => ({
  username: serviceAccountUsername(ns, name),
  groups: [...serviceAccountGroups(ns), 'system:authenticated'],
});

export function registerAuthorizer(env: Environment): void {
  env
    .registerType(`${P}.ResourceCheck`, ResourceCheck)
    .registerType(AUTHORIZER_TYPE, { ctor: Authorizer, fields: { requestResource: `${P}.ResourceCheck` } })
    .registerType(`${P}.GroupCheck`, GroupCheck)
    .registerType(`${P}.PathCheck`, PathCheck)
    .registerType(`${P}.Decision`, Decision)
    .registerFunction(
      `${AUTHORIZER_TYPE}.group(string): ${P}.GroupCheck`,
      (a: Authorizer, g: string) => new GroupCheck(a, g),
    )
    .registerFunction(
      `${AUTHORIZER_TYPE}.path(string): ${P}.PathCheck`,
      (a: Authorizer, p: string) => new PathCheck(a, p),
    )
    .registerFunction(
      `${AUTHORIZER_TYPE}.serviceAccount(string, string): ${AUTHORIZER_TYPE}`,
      (a: Authorizer, ns: string, name: string) =>
        new Authorizer(serviceAccount(ns, name), a.authorize, a.requestResource.attrs),
    )
    .registerFunction(
      `${P}.GroupCheck.resource(string): ${P}.ResourceCheck`,
      (g: GroupCheck, r: string) => new ResourceCheck(g.authz, { group: g.group, resource: r }),
    );
  for (const field of ['subresource', 'namespace', 'name'] as const) {
    env.registerFunction(`${P}.ResourceCheck.${field}(string): ${P}.ResourceCheck`, (c: ResourceCheck, v: string) =>
      c.with(field, v),
    );
  }
  env
    .registerFunction(`${P}.ResourceCheck.check(string): ${P}.Decision`, (c: ResourceCheck, verb: string) =>
      c.authz.decide({ ...c.attrs, verb }),
    )
    .registerFunction(`${P}.PathCheck.check(string): ${P}.Decision`, (c: PathCheck, verb: string) =>
      c.authz.decide({ path: c.path, verb }),
    )
    .registerFunction(`${P}.Decision.allowed(): bool`, (d: Decision) => d.allowed)
    .registerFunction(`${P}.Decision.reason(): string`, (d: Decision) => d.reason)
    .registerFunction(`${P}.Decision.errored(): bool`, (d: Decision) => d.error !== '')
    .registerFunction(`${P}.Decision.error(): string`, (d: Decision) => d.error);
}
