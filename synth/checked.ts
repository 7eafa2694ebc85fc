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
/** A TCP/UDP port, 1–65535. */
export type PortNumber = Checked<number, "PortNumber">;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const IPV6 = /^[0-9A-Fa-f:]+$/;

/** What each parser accepts, in the words a finding uses. */
export const EXPECTED = {
  dnsLabel:
    "a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63",
  dnsSubdomain:
    "a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253",
  ipAddress: "an IPv4 address such as 10.41.0.11 or an IPv6 address such as fd00::11, nothing around it",
  labelValue:
    "a label value: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
  port: "a port number from 1 to 65535",
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

/** `value` as a {@link PortNumber}, or `undefined`. */
export function parsePort(value: number): PortNumber | undefined {
  return Number.isInteger(value) && value >= 1 && value <= 65535 ? (value as PortNumber) : undefined;
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
