/** The API server's compile check of a policy expression, against what a real kube-apiserver v1.37.2 answered. */
import { describe, expect, it } from 'vitest';
import { checkPolicyExpression } from './policy.ts';

describe('a ValidatingAdmissionPolicy expression that does not compile, refused in the words of a real cluster', () => {
  // Each a real API server's refusal of a policy with this one validation, whole; from "Invalid value" on, the
  // detail is what the check says.
  it.each<[string, string]>([
    [
      'nosuchvar == 1',
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "p6" is invalid: spec.validations[0].expression: Invalid value: "nosuchvar == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to \'nosuchvar\' (in container \'\')\n | nosuchvar == 1\n | ^',
    ],
    [
      'object.spec.replicas in 5',
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "p9" is invalid: spec.validations[0].expression: Invalid value: "object.spec.replicas in 5": compilation failed: ERROR: <input>:1:22: found no matching overload for \'@in\' applied to \'(dyn, int)\'\n | object.spec.replicas in 5\n | .....................^',
    ],
    [
      "object.spec.replicas > 1 ? 'a' : 1",
      "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"p22\" is invalid: spec.validations[0].expression: Invalid value: \"object.spec.replicas > 1 ? 'a' : 1\": compilation failed: ERROR: <input>:1:26: found no matching overload for '_?_:_' applied to '(bool, string, int)'\n | object.spec.replicas > 1 ? 'a' : 1\n | .........................^",
    ],
    [
      "object.metadata.name.size() + 'a'",
      "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"p31\" is invalid: spec.validations[0].expression: Invalid value: \"object.metadata.name.size() + 'a'\": compilation failed: ERROR: <input>:1:29: found no matching overload for '_+_' applied to '(int, string)'\n | object.metadata.name.size() + 'a'\n | ............................^",
    ],
    [
      'params.x == 1',
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "p40" is invalid: spec.validations[0].expression: Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to \'params\' (in container \'\')\n | params.x == 1\n | ^',
    ],
    [
      'request.foo == 1',
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "p41" is invalid: spec.validations[0].expression: Invalid value: "request.foo == 1": compilation failed: ERROR: <input>:1:8: undefined field \'foo\'\n | request.foo == 1\n | .......^',
    ],
    [
      'object.metadata.labels.?foo > 1',
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "p4" is invalid: spec.validations[0].expression: Invalid value: "object.metadata.labels.?foo > 1": compilation failed: ERROR: <input>:1:29: found no matching overload for \'_>_\' applied to \'(optional_type(dyn), int)\'\n | object.metadata.labels.?foo > 1\n | ............................^',
    ],
    [
      'unknownFn(1)',
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "p21" is invalid: spec.validations[0].expression: Invalid value: "unknownFn(1)": compilation failed: ERROR: <input>:1:10: undeclared reference to \'unknownFn\' (in container \'\')\n | unknownFn(1)\n | .........^',
    ],
    [
      'object.spec.template.spec.containers.map(c, c.nme)',
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "p29" is invalid: spec.validations[0].expression: Invalid value: "object.spec.template.spec.containers.map(c, c.nme)": must evaluate to bool but got list(dyn)',
    ],
    [
      "{'a': object.spec.foo}",
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "p35" is invalid: spec.validations[0].expression: Invalid value: "{\'a\': object.spec.foo}": must evaluate to bool but got map(string, dyn)',
    ],
  ])('%j', (expression, refusal) => {
    const prefix = `Invalid value: ${JSON.stringify(expression)}: `;
    const detail = refusal.slice(refusal.indexOf(prefix) + prefix.length);
    const checked = checkPolicyExpression(expression, { params: false, authorizer: true }, ['bool']);
    expect('error' in checked && checked.error).toBe(detail);
  });
});
