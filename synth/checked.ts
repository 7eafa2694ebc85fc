/**
 * The types a value has once it has passed the door (issue #21): a name, address or key read from a
 * CR, the inventory, a Secret or the settings is parsed once, where it enters, into one of these.
 * Each is a string (or number) carrying a brand that only this module's parsers attach, so a writer of
 * `haproxy.cfg`, `ssh_config`, `authorized_keys`, `hosts.ini` or an object name that asks for one
 * cannot be handed a string that skipped the check: the compiler refuses it.
 *
 * Every parser returns `undefined` for a value that is not of its kind; the rule that meets the value
 * turns that into a finding, with {@link EXPECTED}'s wording of what would have been accepted.
 */
import { isIPv4 } from "./network.ts";

declare const brand: unique symbol;
/** `Base` marked as checked to be a `Kind`; only a parser below makes one. */
type Checked<Base, Kind extends string> = Base & { readonly [brand]: Kind };

/** A DNS-1123 label (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63): namespaces, cluster and node names. */
export type DnsLabel = Checked<string, "DnsLabel">;
/** A DNS-1123 subdomain (labels joined by `.`, at most 253): the name of most Kubernetes objects. */
export type DnsSubdomain = Checked<string, "DnsSubdomain">;
/** An IPv4 address in dotted-quad form, or an IPv6 address without zone: nothing around it. */
export type IpAddress = Checked<string, "IpAddress">;
/** A Kubernetes label value: empty, or at most 63 alphanumerics, `-`, `_`, `.`, alphanumeric at both ends. */
export type LabelValue = Checked<string, "LabelValue">;
/**
 * A CR's labels as the API server accepts them (`metadata-invalid`): every key a qualified name
 * ({@link qualifiedNameProblem}), every value a {@link LabelValue}.
 */
export type Labels = Checked<Readonly<Record<string, LabelValue>>, "Labels">;
/**
 * A CR's annotations as the API server accepts them (`metadata-invalid`): every key a qualified name
 * once lowercased (the server checks `strings.ToLower(key)`, so `Example.COM/Note` is a key), keys
 * and values at most {@link MAX_ANNOTATION_BYTES} in all.
 */
export type Annotations = Checked<Readonly<Record<string, string>>, "Annotations">;
/** Kubernetes caps the annotations of an object at 256 KiB, keys and values together. */
export const MAX_ANNOTATION_BYTES = 256 * 1024;
/** A TCP/UDP port, 1–65535. */
export type PortNumber = Checked<number, "PortNumber">;
/**
 * One `authorized_keys` line: an OpenSSH key type, its base64 blob (which names the same type) and
 * an optional comment. No line break, so it can't add a second key; no options (`command=`, `from=`),
 * since the type must come first.
 */
export type AuthorizedKey = Checked<string, "AuthorizedKey">;
/**
 * A SIP `nodeInterfaceId`: a networkData network id or a NIC name (`oam-ipv4`, `enp1s0`, `bond0.100`),
 * at most 253 letters, digits, `-`, `_`, `.`, `:` and `@`. It is written into haproxy.cfg's header.
 */
export type InterfaceId = Checked<string, "InterfaceId">;
/** A container image reference (`[domain[:port]/]path[:tag][@digest]`, distribution/reference's grammar). */
export type ImageReference = Checked<string, "ImageReference">;

/**
 * What a node's `hardware.cpuModel` matches (decision 0065): the text folded as
 * {@link foldCpuModel} folds a host's reported model, so "Xeon Gold" matches
 * "Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz".
 */
export type CpuModelMatch = Checked<string, "CpuModelMatch">;

/**
 * A CPU flag as `status.hardware.cpu.flags` lists it and `hardware.cpuFlags` asks for it
 * (decision 0065): lower case, as Linux's `/proc/cpuinfo` writes flags (`avx512f`).
 */
export type CpuFlag = Checked<string, "CpuFlag">;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const IPV6 = /^[0-9A-Fa-f:]+$/;
/** The name part of a qualified name (apimachinery's `qualifiedNameFmt`), at most 63. */
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const INTERFACE_ID = /^[A-Za-z0-9][-A-Za-z0-9_.:@]*$/;
const HOST_PART = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";
/** A registry: only a first component with a `.` or a port, or `localhost`, is one (as Docker reads it). */
const DOMAIN = `(?:localhost(?::[0-9]+)?|${HOST_PART}(?:\\.${HOST_PART})+(?::[0-9]+)?|${HOST_PART}:[0-9]+)`;
const PATH_COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
/** The grammar of distribution/reference: `[domain[:port]/]path[:tag][@digest]`. */
const IMAGE = new RegExp(
  `^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`,
);
/** OpenSSH public key types, as `ssh-keygen` writes them at the start of a `.pub` line. */
const SSH_KEY_TYPES: readonly string[] = [
  "ssh-ed25519",
  "ssh-rsa",
  "ssh-dss",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
];

/** What each parser accepts, in the words a finding uses. */
export const EXPECTED = {
  dnsLabel:
    "a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63",
  dnsSubdomain:
    "a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253",
  ipAddress: "an IPv4 address such as 10.41.0.11 or an IPv6 address such as fd00::11, nothing around it",
  labelValue:
    "a label value: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
  qualifiedName:
    "a qualified name: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, after an optional DNS-1123 subdomain and '/' (example.com/My_name)",
  port: "a port number from 1 to 65535",
  image: "an image reference such as registry.example.com/team/image:1.2",
  interfaceId:
    "a network id or interface name such as oam-ipv4 or enp1s0: letters, digits, '-', '_', '.', ':' and '@', at most 253",
} as const;

/**
 * A CPU model's text as it is compared (decision 0065): lower case, without the trademark marks
 * `(R)`, `(TM)` inspections write, runs of white space as one space, trimmed.
 */
export function foldCpuModel(text: string): string {
  return text
    .toLowerCase()
    .replace(/\((r|tm)\)/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * A `hardware.cpuModel` to match. Text that folds to nothing (spaces, `(TM)` alone) is matched as
 * written, lower case, rather than as every model.
 */
export function parseCpuModelMatch(text: string): CpuModelMatch {
  return (foldCpuModel(text) || text.toLowerCase()) as CpuModelMatch;
}

/** A CPU flag, read from a CR or an inspection: any case in, lower case out. */
export function parseCpuFlag(text: string): CpuFlag {
  return text.trim().toLowerCase() as CpuFlag;
}

/** `text` as a {@link DnsLabel}, or `undefined`. */
export function parseDnsLabel(text: string): DnsLabel | undefined {
  return text.length <= 63 && DNS_LABEL.test(text) ? (text as DnsLabel) : undefined;
}

/** `text` as a {@link DnsSubdomain}, or `undefined`. */
export function parseDnsSubdomain(text: string): DnsSubdomain | undefined {
  return text.length <= 253 && DNS_SUBDOMAIN.test(text) ? (text as DnsSubdomain) : undefined;
}

/** `text` as an {@link IpAddress}, or `undefined` (zone ids, CIDRs, ports and whitespace are refused). */
export function parseIpAddress(text: string): IpAddress | undefined {
  return isIPv4(text) || isIPv6(text) ? (text as IpAddress) : undefined;
}

/** `text` as a {@link LabelValue}, or `undefined`. */
export function parseLabelValue(text: string): LabelValue | undefined {
  return text.length <= 63 && LABEL_VALUE.test(text) ? (text as LabelValue) : undefined;
}

/**
 * Why `text` is not a Kubernetes qualified name (apimachinery's `IsQualifiedName`, which label and
 * annotation keys must be), or `undefined`: a phrase that completes "… is not a qualified name: ".
 */
export function qualifiedNameProblem(text: string): string | undefined {
  const parts = text.split("/");
  if (parts.length > 2) return "it has more than one '/'";
  const name = parts.at(-1) ?? "";
  if (parts.length === 2 && parseDnsSubdomain(parts[0] ?? "") === undefined)
    return `its prefix ${JSON.stringify(parts[0])} is not a DNS-1123 subdomain`;
  if (name === "") return "its name part is empty";
  if (name.length > 63) return `its name part is ${name.length} characters long`;
  if (!QUALIFIED_NAME_PART.test(name))
    return `its name part ${JSON.stringify(name)} has a character other than letters, digits, '-', '_' and '.', or does not start and end with a letter or digit`;
  return undefined;
}

/** `labels` as {@link Labels}, or `undefined` when a key or a value breaks the grammar. */
export function parseLabels(labels: Readonly<Record<string, string>>): Labels | undefined {
  for (const [key, value] of Object.entries(labels)) {
    if (qualifiedNameProblem(key) !== undefined || parseLabelValue(value) === undefined) return undefined;
  }
  return labels as Labels;
}

/** `annotations` as {@link Annotations}, or `undefined` ({@link annotationsSize} for the size). */
export function parseAnnotations(annotations: Readonly<Record<string, string>>): Annotations | undefined {
  for (const key of Object.keys(annotations)) {
    if (qualifiedNameProblem(key.toLowerCase()) !== undefined) return undefined;
  }
  return annotationsSize(annotations) <= MAX_ANNOTATION_BYTES ? (annotations as Annotations) : undefined;
}

/** Bytes of UTF-8 in annotations' keys and values, as the API server adds them up. */
export function annotationsSize(annotations: Readonly<Record<string, string>>): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations))
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  return bytes;
}

/** `value` as a {@link PortNumber}, or `undefined`. */
export function parsePort(value: number): PortNumber | undefined {
  return Number.isInteger(value) && value >= 1 && value <= 65535 ? (value as PortNumber) : undefined;
}

/** `text` as an {@link InterfaceId}, or `undefined`. */
export function parseInterfaceId(text: string): InterfaceId | undefined {
  return text.length <= 253 && INTERFACE_ID.test(text) ? (text as InterfaceId) : undefined;
}

/** `text` as an {@link ImageReference}, or `undefined`. */
export function parseImageReference(text: string): ImageReference | undefined {
  return text.length <= 255 && IMAGE.test(text) ? (text as ImageReference) : undefined;
}

/** `text`, trimmed, as an {@link AuthorizedKey}, or `undefined`; {@link authorizedKeyProblem} says why. */
export function parseAuthorizedKey(text: string): AuthorizedKey | undefined {
  const line = text.trim();
  return authorizedKeyProblem(line) === undefined ? (line as AuthorizedKey) : undefined;
}

/**
 * Why `text` (trimmed) is not one OpenSSH public key line, or `undefined`. Checks that it is one line,
 * the type, that the blob is base64 and that the blob names the same key type (what `ssh-keygen -l`
 * checks first).
 */
export function authorizedKeyProblem(text: string): string | undefined {
  const line = text.trim();
  // sshd reads authorized_keys line by line: a second line is a key of its own, options and all.
  if (hasControlCharacter(line)) {
    return "holds a line break or another control character: an authorized_keys entry is exactly one line";
  }
  const [type = "", blob = ""] = line.split(/\s+/);
  if (!SSH_KEY_TYPES.includes(type)) {
    return `not an OpenSSH public key: expected "<type> <base64> [comment]" with type ${SSH_KEY_TYPES.slice(0, 3).join(", ")}, …`;
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) return `the ${type} key's data is not base64`;
  const decoded = Buffer.from(blob, "base64");
  const length = decoded.length >= 4 ? decoded.readUInt32BE(0) : 0;
  if (decoded.subarray(4, 4 + length).toString("latin1") !== type) {
    return `the key data does not contain a ${type} key (truncated or pasted from another key?)`;
  }
  return undefined;
}

/** Whether `text` holds a control character other than tab (a line break above all). */
function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

/** True for the eight groups of an IPv6 address, `::` allowed once; no zone, no IPv4 tail. */
function isIPv6(text: string): boolean {
  if (!IPV6.test(text)) return false;
  const halves = text.split("::");
  if (halves.length > 2) return false;
  const groups = halves.flatMap((half) => (half === "" ? [] : half.split(":")));
  if (groups.some((group) => group.length === 0 || group.length > 4)) return false;
  return halves.length === 2 ? groups.length <= 7 : groups.length === 8;
}

// --- Tenant identity: what a SIPCluster's `auth` service writes into Dex's configuration, the
// tenant API server's AuthenticationConfiguration and its RBAC bindings (issue #39, decision 0058).

/**
 * The issuer URL of a tenant's OIDC provider, `https://<address>:<port>`: what Dex puts in `iss`,
 * the tenant API server matches tokens against, and both read discovery from. Made only from a
 * checked address and port ({@link issuerUrl}), so it has no path, query, user or fragment.
 */
export type IssuerUrl = Checked<string, "IssuerUrl">;
/** An OAuth2 client id (Dex static client, the API server's audience): 1–63 of `A-Za-z0-9._-`. */
export type ClientId = Checked<string, "ClientId">;
/**
 * A redirect URI Dex may send a login back to, kept as written (Dex compares it byte for byte):
 * `https://…`, `http://` to a loopback host only (kubelogin's local server), or the out-of-band URN.
 */
export type RedirectUri = Checked<string, "RedirectUri">;
/** A name shown to people (a client, a connector, a user): one line, 1–254 characters, no control. */
export type DisplayName = Checked<string, "DisplayName">;
/** A Dex connector id: a DNS-1123 label but `local`, which Dex gives its password database. */
export type ConnectorId = Checked<string, "ConnectorId">;
/** A top-level field of a Dex connector's `config`, such as `clientSecret` or `bindPW`. */
export type ConnectorField = Checked<string, "ConnectorField">;
/**
 * A Dex connector's `config` without its secrets: a JSON object whose keys are field names and
 * whose strings are one line without `$` (Dex expands `$NAME` in connector configs from its
 * environment, which holds the secrets it is given), at most {@link MAX_CONNECTOR_CONFIG} as JSON.
 */
export type ConnectorConfig = Checked<Readonly<Record<string, unknown>>, "ConnectorConfig">;
/** A key of a Secret's data: `-`, `_`, `.` and alphanumerics, at most 253. */
export type SecretKey = Checked<string, "SecretKey">;
/** A group name as an identity provider sends it: one line, 1–256 characters, no edge spaces. */
export type GroupName = Checked<string, "GroupName">;
/**
 * What the tenant API server puts before a username or group from a token: 1–63 of `A-Za-z0-9._-`
 * ending in `:` (`oidc:`), never `system:`, so no token can name a Kubernetes system user or group.
 */
export type ClaimPrefix = Checked<string, "ClaimPrefix">;
/** An email address a static user logs in with, lowercase, at most 254 (Dex's password database key). */
export type EmailAddress = Checked<string, "EmailAddress">;
/** A ClusterRole's name: a DNS-1123 subdomain with `:` allowed (`system:aggregate-to-view`). */
export type RoleName = Checked<string, "RoleName">;
/** One or more PEM `CERTIFICATE` blocks, each an X.509 DER sequence; nothing else, not a key. */
export type PemCertificates = Checked<string, "PemCertificates">;

/** The most a connector's `config` may hold, as JSON: 16 KiB, far above any Dex connector's. */
export const MAX_CONNECTOR_CONFIG = 16 * 1024;
/** How deep a connector's `config` may nest (Dex's deepest, an LDAP search's fields, is 3). */
const MAX_CONNECTOR_DEPTH = 6;

const CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const LOOPBACK_REDIRECT = /^http:\/\/(?:localhost|127\.0\.0\.1|\[::1\])(?::[0-9]{1,5})?(?:\/[^\s#]*)?$/;
const HTTPS_REDIRECT = /^https:\/\/[^\s/?#@\\]+(?:[/?][^\s#]*)?$/;
/** The URN of RFC 8252's out-of-band flow, which Dex serves for public clients. */
const OUT_OF_BAND = "urn:ietf:wg:oauth:2.0:oob";
const CONNECTOR_FIELD = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]{1,253}$/;
const CLAIM_PREFIX = /^[A-Za-z0-9][-A-Za-z0-9_.]{0,61}:$/;
const EMAIL = /^[a-z0-9!#%&'*+/=?^_`{|}~.-]+@[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?$/;
const ROLE_NAME = /^[a-z0-9](?:[-a-z0-9.:]*[a-z0-9])?$/;
/**
 * A control character (C0, DEL, C1: NEL among them) or a line or paragraph separator: what would
 * break a value out of its line in a YAML 1.1 reader (Dex reads its config with go-yaml) or a log.
 */
const UNSEEN = /[\p{Cc}\u2028\u2029]/u;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END CERTIFICATE-----\r?\n?/g;

/** What the tenant identity parsers accept, in the words a finding uses. */
export const EXPECTED_AUTH = {
  clientId: "a client id: 1 to 63 letters, digits, '.', '_' and '-', starting with a letter or digit",
  redirectUri: `an https:// URL, an http:// URL to localhost, 127.0.0.1 or [::1] (kubelogin's local server), or ${OUT_OF_BAND}, without spaces or a fragment`,
  displayName: "one line of 1 to 254 characters without control characters or spaces at either end",
  connectorId: "a connector id: a DNS-1123 label other than 'local', which Dex gives its password database",
  connectorField:
    "a Dex connector config field name such as clientSecret: a letter, then letters, digits and '_', at most 63",
  secretKey: "a Secret key: letters, digits, '-', '_' and '.', at most 253",
  groupName:
    "a group name: one line of 1 to 256 characters without control characters or spaces at either end",
  claimPrefix:
    "a prefix such as oidc: : 1 to 63 letters, digits, '-', '_' and '.' ending in ':', never system:",
  email: "a lowercase email address such as alice@example.com",
  roleName:
    "a ClusterRole name such as view or system:aggregate-to-edit: lowercase letters, digits, '-', '.' and ':'",
  certificates:
    "PEM CERTIFICATE blocks (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----) and nothing else",
} as const;

/** `https://<host>:<port>`, the issuer of a tenant's OIDC provider; an IPv6 address is bracketed. */
export function issuerUrl(host: IpAddress, port: PortNumber): IssuerUrl {
  return `https://${host.includes(":") ? `[${host}]` : host}:${port}` as IssuerUrl;
}

/** `text` as a {@link ClientId}, or `undefined`. */
export function parseClientId(text: string): ClientId | undefined {
  return CLIENT_ID.test(text) ? (text as ClientId) : undefined;
}

/** `text` as a {@link RedirectUri}, or `undefined`. */
export function parseRedirectUri(text: string): RedirectUri | undefined {
  if (text === OUT_OF_BAND) return text as RedirectUri;
  if (text.length > 2048 || UNSEEN.test(text) || !URL.canParse(text)) return undefined;
  return LOOPBACK_REDIRECT.test(text) || HTTPS_REDIRECT.test(text) ? (text as RedirectUri) : undefined;
}

/** `text` as a {@link DisplayName}, or `undefined`. */
export function parseDisplayName(text: string): DisplayName | undefined {
  return oneLine(text, 254) ? (text as DisplayName) : undefined;
}

/** `text` as a {@link ConnectorId}, or `undefined`. */
export function parseConnectorId(text: string): ConnectorId | undefined {
  return text !== "local" && parseDnsLabel(text) !== undefined ? (text as ConnectorId) : undefined;
}

/** `text` as a {@link ConnectorField}, or `undefined`. */
export function parseConnectorField(text: string): ConnectorField | undefined {
  return CONNECTOR_FIELD.test(text) ? (text as ConnectorField) : undefined;
}

/**
 * `config` as a {@link ConnectorConfig}, or why not: a phrase naming the offending place that
 * completes "the connector config …".
 */
export function parseConnectorConfig(
  config: Readonly<Record<string, unknown>>,
): { config: ConnectorConfig } | { problem: string } {
  const problem = jsonProblem(config, "config", 0);
  if (problem !== undefined) return { problem };
  const size = JSON.stringify(config).length;
  if (size > MAX_CONNECTOR_CONFIG)
    return { problem: `is ${size} characters as JSON; at most ${MAX_CONNECTOR_CONFIG}` };
  return { config: config as ConnectorConfig };
}

/** Why a JSON value at `where` can't go into a Dex connector config, or `undefined`. */
function jsonProblem(value: unknown, where: string, depth: number): string | undefined {
  if (typeof value === "string") {
    if (value.includes("$"))
      return `${where} holds '$', which Dex expands as an environment variable: give the value through secretKeyRefs if it is a secret, or without '$'`;
    if (UNSEEN.test(value) || value.length > 4096)
      return `${where} is not one line of at most 4096 characters`;
    return undefined;
  }
  if (typeof value === "number")
    return Number.isFinite(value) ? undefined : `${where} is not a finite number`;
  if (typeof value === "boolean" || value === null) return undefined;
  if (depth >= MAX_CONNECTOR_DEPTH) return `${where} nests deeper than ${MAX_CONNECTOR_DEPTH} levels`;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = jsonProblem(item, `${where}[${index}]`, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (!CONNECTOR_FIELD.test(key))
        return `${where} has the key ${JSON.stringify(key)}, which is not ${EXPECTED_AUTH.connectorField}`;
      const problem = jsonProblem(item, `${where}.${key}`, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  return `${where} is not a JSON value`;
}

/** `text` as a {@link SecretKey}, or `undefined`. */
export function parseSecretKey(text: string): SecretKey | undefined {
  return SECRET_KEY.test(text) ? (text as SecretKey) : undefined;
}

/** `text` as a {@link GroupName}, or `undefined`. */
export function parseGroupName(text: string): GroupName | undefined {
  return oneLine(text, 256) ? (text as GroupName) : undefined;
}

/** `text` as a {@link ClaimPrefix}, or `undefined`. */
export function parseClaimPrefix(text: string): ClaimPrefix | undefined {
  return CLAIM_PREFIX.test(text) && !text.toLowerCase().startsWith("system:")
    ? (text as ClaimPrefix)
    : undefined;
}

/** `text` as an {@link EmailAddress}, or `undefined`. */
export function parseEmailAddress(text: string): EmailAddress | undefined {
  return text.length <= 254 && EMAIL.test(text) ? (text as EmailAddress) : undefined;
}

/** `text` as a {@link RoleName}, or `undefined`. */
export function parseRoleName(text: string): RoleName | undefined {
  return text.length <= 253 && ROLE_NAME.test(text) ? (text as RoleName) : undefined;
}

/**
 * `text` as {@link PemCertificates}, or `undefined`: one or more CERTIFICATE blocks, whitespace
 * between them, each body base64 of a DER SEQUENCE whose length is the body's (what Go's
 * `x509.ParseCertificate` reads first). Written back as the blocks, one newline after each.
 */
export function parsePemCertificates(text: string): PemCertificates | undefined {
  const blocks: string[] = [];
  let rest = text;
  for (const match of text.matchAll(PEM_BLOCK)) {
    const body = (match[1] ?? "").replace(/\r?\n/g, "");
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || !isDerSequence(Buffer.from(body, "base64"))) return undefined;
    blocks.push(match[0].replace(/\r\n/g, "\n").replace(/\n?$/, "\n"));
    rest = rest.replace(match[0], "");
  }
  return blocks.length > 0 && rest.trim() === "" ? (blocks.join("") as PemCertificates) : undefined;
}

/** Whether `der` is exactly one DER SEQUENCE (tag 0x30, definite length covering the rest). */
function isDerSequence(der: Buffer): boolean {
  if (der.length < 2 || der[0] !== 0x30) return false;
  const first = der[1]!;
  if (first < 0x80) return first + 2 === der.length;
  const bytes = first & 0x7f;
  if (bytes === 0 || bytes > 4 || der.length < 2 + bytes) return false;
  let length = 0;
  for (let index = 0; index < bytes; index++) length = length * 256 + der[2 + index]!;
  return length + 2 + bytes === der.length;
}

/** One line of 1 to `max` characters, no control characters, no whitespace at either end. */
function oneLine(text: string, max: number): boolean {
  return text.length >= 1 && text.length <= max && !UNSEEN.test(text) && text.trim() === text;
}
