import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/** Whether outbound calls may reach loopback and private networks (ALLOW_PRIVATE_NETWORKS: development, tests). */
export interface OutboundPolicy {
  allowPrivateNetworks: boolean;
}

/** A destination refused by the policy; `reason` is safe to show to the user who configured it. */
export class OutboundRefusedError extends Error {
  override readonly name = "OutboundRefusedError";
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Whether an address is public: globally routable unicast. Everything else is refused: loopback, private
 * (RFC 1918), link-local (the cloud metadata endpoint 169.254.169.254 included), carrier-grade NAT, unique local
 * IPv6 (fd00:ec2::254 included), multicast, reserved, documentation and benchmark ranges, the unspecified
 * address, and the IPv6 forms that embed an IPv4 address (IPv4-mapped and -compatible forms are judged as the
 * IPv4 address they carry; NAT64, 6to4 and Teredo are refused outright).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === "unicast";
}

/**
 * The URL, parsed and checked for what can be known without resolving it: a well-formed absolute URL, `https`
 * (or `http` as well when private networks are allowed), no credentials in it, and, when the host is an address,
 * a public one.
 */
export function checkUrl(raw: string, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefusedError("must be an absolute URL");
  }
  const schemes = policy.allowPrivateNetworks ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) {
    throw new OutboundRefusedError(
      policy.allowPrivateNetworks ? "must be an https or http URL" : "must be an https URL",
    );
  }
  if (url.username || url.password) throw new OutboundRefusedError("must not carry credentials");
  const host = hostOf(url);
  if (!policy.allowPrivateNetworks && isIP(host) && !isPublicAddress(host)) {
    throw new OutboundRefusedError(`must not point at a private, loopback or reserved address (${host})`);
  }
  return url;
}

/** The URL's host as an address or name: `[::1]` becomes `::1`. */
function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

type Lookup = (hostname: string) => Promise<LookupAddress[]>;

const systemLookup: Lookup = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/**
 * Every address the URL's host resolves to, each one public (unless private networks are allowed). A name that
 * resolves to any refused address is refused whole: a caller cannot choose which of its addresses is used.
 */
export async function resolveDestination(
  url: URL,
  policy: OutboundPolicy,
  lookup: Lookup = systemLookup,
): Promise<LookupAddress[]> {
  const host = hostOf(url);
  if (isIP(host)) {
    checkUrl(url.href, policy);
    return [{ address: host, family: isIP(host) }];
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host);
  } catch {
    throw new OutboundRefusedError(`its host ${host} could not be resolved`);
  }
  if (addresses.length === 0) throw new OutboundRefusedError(`its host ${host} could not be resolved`);
  if (!policy.allowPrivateNetworks) {
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) {
      throw new OutboundRefusedError(
        `its host ${host} resolves to a private, loopback or reserved address (${refused.address})`,
      );
    }
  }
  return addresses;
}

/**
 * A `lookup` for the connection itself (undici's `connect.lookup`, net.connect's `lookup`): it resolves the host,
 * checks every address, and hands the connection only the addresses it checked. A name that resolved to a public
 * address when the URL was accepted and to a private one now (DNS rebinding) is refused here, at the moment
 * that counts.
 */
export function guardedLookup(policy: OutboundPolicy, lookup: Lookup = systemLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolveDestination(
      new URL(`https://${hostname.includes(":") ? `[${hostname}]` : hostname}/`),
      policy,
      lookup,
    )
      .then((addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = wanted ? addresses.filter((entry) => entry.family === wanted) : addresses;
        if (usable.length === 0) {
          callback(new OutboundRefusedError(`its host ${hostname} has no IPv${wanted} address`), "", 4);
        } else if (options.all) {
          (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
        } else {
          const first = usable[0]!;
          callback(null, first.address, first.family);
        }
      })
      .catch((error: Error) => callback(error, "", 4));
  };
}
