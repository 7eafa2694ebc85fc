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
