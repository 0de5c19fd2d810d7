/**
 * Admission of CertificateSigningRequests and ClusterTrustBundles: the requester's identity is
 * recorded on create (§5.2); approving needs `approve` on the signer, issuing needs `sign`, and a
 * trust bundle tied to a signer needs `attest` (§5.3); the API-server client signer may not issue
 * for `system:masters`.
 */
import { group, type Naming } from '../../api/naming.ts';
import { type AdmissionAttributes, type AdmissionPlugin, onlyGcFieldsChanged } from '../admission.ts';
import { forbidden } from '../errors.ts';
import { type AccessChecker, allowedOnSigner } from './authorize.ts';

const MASTERS = 'system:masters';

interface CsrSpec {
  signerName?: string;
  request?: string;
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

const specOf = (obj: unknown) => ((obj as { spec?: CsrSpec })?.spec ?? {}) as CsrSpec;

export function certificatesAdmission(
  n: Naming,
  can: AccessChecker,
  subjectOrganizations: (pem: string) => string[],
): AdmissionPlugin {
  const certificates = group(n, 'certificates');
  const isCsr = (a: AdmissionAttributes) => a.rt.group === certificates && a.rt.kind === 'CertificateSigningRequest';
  const isBundle = (a: AdmissionAttributes) => a.rt.group === certificates && a.rt.kind === 'ClusterTrustBundle';
  async function validateCertificates(a: AdmissionAttributes): Promise<void> {
    if (isCsr(a) && a.operation === 'CREATE') {
      const spec = specOf(a.object);
      if (spec.signerName === n.signers.apiServerClient && spec.request) {
        const pem = Buffer.from(spec.request, 'base64').toString('utf8');
        if (subjectOrganizations(pem).includes(MASTERS)) {
          throw forbidden(
            a.rt,
            a.name,
            `use of ${n.signers.apiServerClient} signer with ${MASTERS} group is not allowed`,
          );
        }
      }
    }
    if (isCsr(a) && a.operation === 'UPDATE' && a.subresource === 'approval') {
      const signer = specOf(a.oldObject).signerName ?? '';
      if (!(await allowedOnSigner(can, a.user, 'approve', certificates, signer))) {
        throw forbidden(a.rt, a.name, `user not permitted to approve requests with signerName "${signer}"`);
      }
    }
    if (isCsr(a) && a.operation === 'UPDATE' && a.subresource === 'status') {
      const before = (a.oldObject?.status as { certificate?: string } | undefined)?.certificate;
      const after = (a.object?.status as { certificate?: string } | undefined)?.certificate;
      const signer = specOf(a.oldObject).signerName ?? '';
      if (after !== before && !(await allowedOnSigner(can, a.user, 'sign', certificates, signer))) {
        throw forbidden(a.rt, a.name, `user not permitted to sign requests with signerName "${signer}"`);
      }
    }
    if (isBundle(a) && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object) {
      const signer = (a.object.spec as { signerName?: string } | undefined)?.signerName ?? '';
      const gcOnly = a.oldObject !== undefined && onlyGcFieldsChanged(a.object, a.oldObject);
      if (signer && !gcOnly && !(await allowedOnSigner(can, a.user, 'attest', certificates, signer))) {
        throw forbidden(a.rt, a.name, `user not permitted to attest for signerName "${signer}"`);
      }
    }
  }
  return {
    name: 'Certificates',
    admit(a) {
      if (!isCsr(a) || a.operation !== 'CREATE' || !a.object) return;
      const { username, uid, groups, extra } = a.user;
      const spec = specOf(a.object);
      a.object.spec = { ...spec, username, uid, groups, extra };
      if (!uid) delete (a.object.spec as CsrSpec).uid;
      if (!extra || !Object.keys(extra).length) delete (a.object.spec as CsrSpec).extra;
    },
    // Synchronous for every other group: nearly every write passes through here.
    validate(a) {
      if (a.rt.group === certificates) return validateCertificates(a);
    },
  };
}
