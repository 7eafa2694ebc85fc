/**
 * IP and CIDR syntax, written out because `node:net` is an edge module and `synth/` stays pure.
 */

const IPV4_OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const IPV4 = new RegExp(`^${IPV4_OCTET}(\\.${IPV4_OCTET}){3}$`);

/** True for a dotted-quad IPv4 address. */
export function isIPv4(text: string): boolean {
  return IPV4.test(text);
}

/** The 8 groups of an IPv6 address, or undefined when the text isn't one (no zone ids, no IPv4 tail). */
function ipv6Groups(text: string): number[] | undefined {
  if (!/^[0-9a-fA-F:]+$/.test(text) || text.split("::").length > 2) return undefined;
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":"));
  const headGroups = parse(head);
  const tailGroups = tail === undefined ? [] : parse(tail);
  const missing = 8 - headGroups.length - tailGroups.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...tailGroups];
  if (groups.some((group) => group.length === 0 || group.length > 4)) return undefined;
  return groups.map((group) => parseInt(group, 16));
}

/**
 * Why a CIDR is not acceptable as a pod subnet, or undefined when it is. Host bits must be zero,
 * because kubespray passes the value to the CNI verbatim and a stray host bit there fails late.
 */
export function cidrProblem(text: string): string | undefined {
  const [address = "", prefixText, ...extra] = text.split("/");
  if (prefixText === undefined || extra.length > 0 || !/^[0-9]{1,3}$/.test(prefixText)) {
    return `"${text}" is not a CIDR (expected address/prefix, e.g. 10.244.64.0/18)`;
  }
  const prefix = Number(prefixText);
  if (isIPv4(address)) {
    if (prefix > 32) return `prefix /${prefix} is longer than 32 bits for IPv4`;
    const value = address.split(".").reduce((sum, octet) => sum * 256 + Number(octet), 0);
    const hostBits = prefix === 0 ? value : value % 2 ** (32 - prefix);
    if (hostBits !== 0) {
      const network = value - hostBits;
      const dotted = [24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join(".");
      return `"${text}" has host bits set (did you mean ${dotted}/${prefix}?)`;
    }
    return undefined;
  }
  const groups = ipv6Groups(address);
  if (groups) {
    if (prefix > 128) return `prefix /${prefix} is longer than 128 bits for IPv6`;
    const bits = groups.map((group) => group.toString(2).padStart(16, "0")).join("");
    if (bits.slice(prefix).includes("1")) return `"${text}" has host bits set`;
    return undefined;
  }
  return `"${address}" is not an IPv4 or IPv6 address`;
}
