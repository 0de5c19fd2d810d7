import { describe, expect, it } from 'vitest';
import { escalationMessage } from './escalation.ts';

describe('escalationMessage', () => {
  it("names the user and groups as the reference's %q does, then the missing rules", () => {
    expect(
      escalationMessage({ username: 'jane', groups: ['dev', 'system:authenticated'] }, '{Verbs:["get"]}', []),
    ).toBe(
      'user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{Verbs:["get"]}',
    );
  });

  it('appends what could not be resolved', () => {
    expect(escalationMessage({ username: 'u', groups: [] }, 'x', ['role "a" not found', 'role "b" not found'])).toBe(
      'user "u" (groups=[]) is attempting to grant RBAC permissions not currently held:\nx; resolution errors: [role "a" not found role "b" not found]',
    );
  });
});
