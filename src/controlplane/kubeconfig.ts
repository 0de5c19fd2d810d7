/** Kubeconfig files for the embedded control plane: one cluster, user and context, with credentials embedded. */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { stringify } from 'yaml';

export interface KubeconfigUser {
  name: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
}

export interface KubeconfigOptions {
  /** The API server URL, such as `https://127.0.0.1:6443`. */
  server: string;
  /** The CA bundle that signs the server's certificate. */
  caPem: string;
  user: KubeconfigUser;
  clusterName: string;
  contextName: string;
  /** The context's default namespace. */
  namespace?: string;
}

const base64 = (text: string | undefined) => (text === undefined ? undefined : Buffer.from(text).toString('base64'));

/** Renders a kubeconfig whose only context, also the current one, joins the cluster and the user. */
export function renderKubeconfig(options: KubeconfigOptions): string {
  const { server, caPem, user, clusterName, contextName, namespace } = options;
  if ((user.clientCertPem === undefined) !== (user.clientKeyPem === undefined)) {
    throw new Error(`user "${user.name}" needs both a client certificate and its key, or neither`);
  }
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: clusterName, cluster: { server, 'certificate-authority-data': base64(caPem) } }],
    users: [
      {
        name: user.name,
        user: {
          'client-certificate-data': base64(user.clientCertPem),
          'client-key-data': base64(user.clientKeyPem),
          token: user.token,
        },
      },
    ],
    contexts: [{ name: contextName, context: { cluster: clusterName, user: user.name, namespace } }],
    'current-context': contextName,
    preferences: {},
  });
}

/**
 * Writes the kubeconfig to `path` with mode 0600, creating its directory (0700) when missing. The file is replaced
 * atomically, so readers never see a partial file, and an existing file with a looser mode is not reused.
 */
export async function writeKubeconfig(path: string, options: KubeconfigOptions): Promise<void> {
  const text = renderKubeconfig(options);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
