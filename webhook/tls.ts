/**
 * The serving certificate: read at start, and read again whenever cert-manager rotates the mounted
 * Secret, without a restart. A new pair takes effect for new connections; a pair that does not fit
 * together (the certificate written, the key not yet) is skipped until the next change completes it.
 */
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createSecureContext, type SecureContextOptions, type Server } from "node:tls";
import { watchPaths, type PathWatch, type WatchOptions } from "./file-watch.ts";
import type { Logger } from "./log.ts";

/** Where the PEM certificate (chain) and private key are. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

/** TLS 1.2 is the floor (docs/contract.md §5); the API server speaks 1.3 where it can. */
export const MIN_TLS_VERSION = "TLSv1.2";

/**
 * The secure context options for `files`. Throws when a file can't be read, or the key does not
 * belong to the certificate.
 */
export async function readTls(files: TlsFiles): Promise<SecureContextOptions> {
  const [cert, key] = await Promise.all([readFile(files.certFile), readFile(files.keyFile)]);
  const options: SecureContextOptions = { cert, key, minVersion: MIN_TLS_VERSION };
  createSecureContext(options); // throws "key values mismatch" for a pair that does not fit
  return options;
}

/** Swaps `server`'s certificate whenever the files change; see the module comment. */
export function reloadTlsOnChange(
  server: Server,
  files: TlsFiles,
  log: Logger,
  options: WatchOptions = {},
): PathWatch {
  return watchPaths(
    [files.certFile, files.keyFile],
    async () => {
      try {
        const context = await readTls(files);
        server.setSecureContext(context);
        log.info("tls certificate loaded", describeCertificate(context.cert));
      } catch (error) {
        log.warn("tls certificate not reloaded; the previous one stays in use until the files change again", {
          problem: error instanceof Error ? error.message : String(error),
        });
      }
    },
    options,
  );
}

/** Subject, expiry and fingerprint of the leaf certificate, for the log. */
export function describeCertificate(cert: SecureContextOptions["cert"]): Record<string, string> {
  if (!Buffer.isBuffer(cert)) return {};
  const leaf = new X509Certificate(cert);
  return { subject: leaf.subject, validTo: leaf.validTo, fingerprint256: leaf.fingerprint256 };
}
