import type { FieldPath } from "../field-path.ts";
import type { Issue } from "../issue.ts";
import type { Reporter } from "../model/resource.ts";

/**
 * Recognisers for secret material that must never sit in a CR or in rendered output (docs/contract.md §2
 * `secret-inline`, §8 "no secrets in Git"). Each names what it found, so the message can say
 * "looks like a private key" instead of echoing the secret back.
 */
const SECRET_PATTERNS: readonly { readonly what: string; readonly pattern: RegExp }[] = [
  { what: "a private key", pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/ },
  { what: "a password assignment", pattern: /\b(pass(word|wd)?|pwd)[ \t]*[:=][ \t]*[^\s"'{}]+/i },
  {
    what: "a token assignment",
    pattern: /\b(token|secret|api[-_]?key)[ \t]*[:=][ \t]*[A-Za-z0-9+/_.-]{8,}/i,
  },
  { what: "a JSON Web Token", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { what: "an AWS access key", pattern: /\bAKIA[0-9A-Z]{16}\b/ },
  { what: "a GitHub token", pattern: /\bgh[pousr]_[A-Za-z0-9]{30,}\b/ },
  // What Dex's password database and htpasswd files hold: a hash that can be attacked offline.
  { what: "a bcrypt password hash", pattern: /\$2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}/ },
];

/**
 * Map keys whose non-empty string value is a credential by name alone: the usual ones, and the
 * secrets of Dex's connectors (OAuth2 client secrets, LDAP's bind password, Keystone's password).
 */
const SECRET_KEY =
  /^(pass(word|wd)?|pwd|token|secret|private[-_]?key|api[-_]?key|client[-_]?secret|bind[-_]?pw|keystone[-_]?password)$/i;

/**
 * What every pattern above needs somewhere in the text: a text without any of these (most names,
 * labels and plugin lists) is tested once instead of against each pattern. Keep it in step with them.
 */
const MAY_HOLD_SECRET = /-----BEGIN|[:=]|eyJ|AKIA|gh[pousr]_|\$2/;

/** What secret material a text contains, if any. */
export function secretMaterialIn(text: string): string | undefined {
  if (!MAY_HOLD_SECRET.test(text)) return undefined;
  return SECRET_PATTERNS.find(({ pattern }) => pattern.test(text))?.what;
}

/** A place in an object that holds secret material. */
export interface SecretFinding {
  readonly path: FieldPath;
  readonly message: string;
}

/**
 * Every string of an object (keys and values) that looks like a credential. The value itself is never
 * quoted in the message: reporting a leaked password must not leak it again into CI logs.
 */
export function secretFindings(value: unknown, path: FieldPath = []): SecretFinding[] {
  const findings: SecretFinding[] = [];
  // One path stack, copied only for a finding: the webhook scans every object it reviews, and
  // copying the path at each level made deep objects cost the square of their depth.
  collectSecrets(value, [...path], findings);
  return findings;
}

function collectSecrets(value: unknown, path: (string | number)[], findings: SecretFinding[]): void {
  if (typeof value === "string") {
    const what = secretMaterialIn(value);
    if (what) {
      findings.push({
        path: [...path],
        message: `looks like ${what}; reference a Secret by name instead of writing it here`,
      });
    }
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      path.push(index);
      collectSecrets(item, path, findings);
      path.pop();
    });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  for (const key of Object.keys(value)) {
    const child: unknown = Reflect.get(value, key);
    // kubectl keeps a copy of the whole object here; scanning it would report every finding twice.
    if (key === "kubectl.kubernetes.io/last-applied-configuration") continue;
    path.push(key);
    if (SECRET_KEY.test(key) && typeof child === "string" && child !== "") {
      findings.push({
        path: [...path],
        message: `field "${key}" holds a credential; reference a Secret by name instead`,
      });
    } else {
      collectSecrets(child, path, findings);
    }
    path.pop();
  }
}

/** `secret-inline`: anything in `value` that looks like a private key or a password. */
export function secretInline(value: unknown, report: Reporter): Issue[] {
  return secretFindings(value).map((finding) => report("secret-inline", finding.path, finding.message));
}
