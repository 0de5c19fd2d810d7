/**
 * The signing CA from a certificate file and a key file (reference §3.6): checked at start-up, watched, and
 * reloaded without a restart. A reload that fails (missing file, key not matching, half-written swap) keeps
 * the previous pair and is retried with backoff. The signer turns the current bytes into a {@link SigningCa}
 * when they change, and refuses to sign while they do not parse.
 */
import { createPrivateKey, X509Certificate as NodeX509 } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { readCaCertificate } from '../../../src/pki/ca-certificate.ts';
import { readPrivateKeyPem, signingAlgorithmOf } from '../../../src/pki/keys.ts';
import { splitPemBlocks } from '../../../src/pki/pem.ts';
import type { Clock, Timer } from '../../../src/util/clock.ts';
import type { SigningCa } from './certificate.ts';

export interface CaFiles {
  certFile: string;
  keyFile: string;
}

export interface CaContent {
  certPem: string;
  keyPem: string;
}

/** Reads both files and checks that the key is the (first) certificate's; throws with the reason. */
export function readCaFiles(files: CaFiles): CaContent {
  const certPem = readFileSync(files.certFile, 'utf8');
  const keyPem = readFileSync(files.keyFile, 'utf8');
  checkKeyPair({ certPem, keyPem }, files);
  return { certPem, keyPem };
}

export function checkKeyPair(content: CaContent, files: CaFiles): void {
  if (!content.certPem.trim()) throw new Error(`missing content for CA cert file "${files.certFile}"`);
  if (!content.keyPem.trim()) throw new Error(`missing content for CA key file "${files.keyFile}"`);
  let cert: NodeX509;
  try {
    cert = new NodeX509(content.certPem);
  } catch (err) {
    throw new Error(`error reading CA cert file "${files.certFile}": ${(err as Error).message}`);
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(content.keyPem);
  } catch (err) {
    throw new Error(`error reading CA key file "${files.keyFile}": ${(err as Error).message}`);
  }
  if (!cert.checkPrivateKey(key)) throw new Error('tls: private key does not match public key');
}

/**
 * Parses a checked pair for signing: exactly one certificate, a CA allowed to sign certificates, and a
 * signing key (RSA, ECDSA P-256/P-384 or Ed25519; PKCS#1, SEC1 or PKCS#8).
 */
export async function toSigningCa(content: CaContent, certFile: string): Promise<SigningCa> {
  const blocks = splitPemBlocks(content.certPem).filter((b) => b.type === 'CERTIFICATE');
  if (blocks.length !== 1) {
    throw new Error(`error reading CA cert file "${certFile}": expected 1 certificate, found ${blocks.length}`);
  }
  const privateKey = readPrivateKeyPem(content.keyPem);
  const ca = readCaCertificate(blocks[0].der, privateKey);
  return {
    subject: ca.subject,
    notAfter: ca.notAfter,
    privateKey,
    signingAlgorithm: signingAlgorithmOf(privateKey),
    authorityKeyId: ca.keyId,
  };
}

export interface CaWatcherOptions {
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Called after every successful reload that changed the content. */
  onChange?: () => void;
  /** Debounce of file events (a swap writes two files). */
  settleMs?: number;
}

const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 60_000;
const REWATCH_MS = 60_000;

/** Holds the current CA pair of two files and keeps it up to date while started. */
export class CaFileWatcher {
  private content: CaContent;
  private generation = 1;
  private watchers: FSWatcher[] = [];
  private timer?: Timer;
  private failures = 0;
  private stopped = true;
  private parsed?: { generation: number; ca: Promise<SigningCa> };

  constructor(
    readonly files: CaFiles,
    private readonly opts: CaWatcherOptions,
  ) {
    this.content = readCaFiles(files);
  }

  /** The current pair and a number that changes whenever it does. */
  current(): { content: CaContent; generation: number } {
    return { content: this.content, generation: this.generation };
  }

  /** The current pair parsed for signing: once per change, for every signer these files serve. */
  signingCa(): Promise<SigningCa> {
    if (this.parsed?.generation !== this.generation) {
      this.parsed = { generation: this.generation, ca: toSigningCa(this.content, this.files.certFile) };
    }
    return this.parsed.ca;
  }

  start(): void {
    this.stopped = false;
    this.watch();
  }

  stop(): void {
    this.stopped = true;
    this.closeWatchers();
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Reads the files now; true when the content changed. A failure keeps the previous pair and throws. */
  reload(): boolean {
    const next = readCaFiles(this.files);
    if (next.certPem === this.content.certPem && next.keyPem === this.content.keyPem) return false;
    this.content = next;
    this.generation++;
    this.opts.logger.info({ cert: this.files.certFile, key: this.files.keyFile }, 'loaded a new signing CA pair');
    this.opts.onChange?.();
    return true;
  }

  private watch(): void {
    if (this.stopped) return;
    this.closeWatchers();
    // Watch the directories, not the files: an atomic swap (rename over, or a symlink flip) replaces the
    // file's inode and would end a watch on the file itself.
    const dirs = new Set([dirname(resolve(this.files.certFile)), dirname(resolve(this.files.keyFile))]);
    try {
      for (const dir of dirs) {
        const w = watch(dir, { persistent: false }, () => this.schedule(this.opts.settleMs ?? 50));
        w.on('error', (err) => {
          this.opts.logger.warn({ dir, err: String(err) }, 'CA file watch failed; watching again in a minute');
          this.closeWatchers();
          this.scheduleRewatch();
        });
        this.watchers.push(w);
      }
    } catch (err) {
      this.opts.logger.warn(
        { files: [basename(this.files.certFile), basename(this.files.keyFile)], err: String(err) },
        'cannot watch the CA files; trying again in a minute',
      );
      this.closeWatchers();
      this.scheduleRewatch();
      return;
    }
    // Each (re)start of the watch also reloads once: changes made while nobody watched are not lost.
    this.schedule(0);
  }

  private scheduleRewatch(): void {
    if (this.stopped) return;
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = undefined;
      this.watch();
    }, REWATCH_MS);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = undefined;
      this.tryReload();
    }, ms);
  }

  private tryReload(): void {
    try {
      this.reload();
      this.failures = 0;
    } catch (err) {
      const wait = Math.min(RETRY_BASE_MS * 2 ** this.failures, RETRY_MAX_MS);
      this.failures++;
      this.opts.logger.error(
        { cert: this.files.certFile, key: this.files.keyFile, err: (err as Error).message, retryInMs: wait },
        'reloading the signing CA failed; keeping the previous pair',
      );
      this.schedule(wait);
    }
  }

  private closeWatchers(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }
}
