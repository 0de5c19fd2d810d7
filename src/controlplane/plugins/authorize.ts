/** The authorization question admission plugins ask: may this user do `verb` on a named resource? */
import type { UserInfo } from '../admission.ts';

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  name: string;
}

export type AccessChecker = (user: UserInfo, check: AccessCheck) => Promise<boolean>;

/** Allowed on the signer itself or on its `<domain>/*` wildcard, as the reference checks signers. */
export async function allowedOnSigner(
  can: AccessChecker,
  user: UserInfo,
  verb: string,
  group: string,
  signerName: string,
): Promise<boolean> {
  if (await can(user, { verb, group, resource: 'signers', name: signerName })) return true;
  const slash = signerName.indexOf('/');
  return slash > 0 && can(user, { verb, group, resource: 'signers', name: `${signerName.slice(0, slash)}/*` });
}
