import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkUrl,
  isPublicAddress,
  OutboundClient,
  OutboundRefusedError,
  resolveDestination,
} from "../src/index.js";

const strict = { allowPrivateNetworks: false };
const lenient = { allowPrivateNetworks: true };

describe("isPublicAddress", () => {
  const refused: [string, string][] = [
    ["0.0.0.0", "unspecified IPv4 (this network)"],
    ["0.1.2.3", "this network"],
    ["10.0.0.1", "private 10/8"],
    ["10.255.255.255", "private 10/8, last"],
    ["100.64.0.1", "carrier-grade NAT 100.64/10"],
    ["100.127.255.254", "carrier-grade NAT, last"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback, elsewhere in 127/8"],
    ["169.254.169.254", "link-local: the cloud metadata endpoint"],
    ["169.254.0.1", "link-local"],
    ["172.16.0.1", "private 172.16/12"],
    ["172.31.255.255", "private 172.16/12, last"],
    ["192.0.0.8", "IETF protocol assignments 192.0.0/24"],
    ["192.0.2.1", "documentation TEST-NET-1"],
    ["192.168.1.1", "private 192.168/16"],
    ["198.18.0.1", "benchmarking 198.18/15"],
    ["198.51.100.1", "documentation TEST-NET-2"],
    ["203.0.113.1", "documentation TEST-NET-3"],
    ["224.0.0.1", "multicast"],
    ["240.0.0.1", "reserved 240/4"],
    ["255.255.255.255", "broadcast"],
    ["::", "unspecified IPv6"],
    ["::1", "IPv6 loopback"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:10.0.0.1", "IPv4-mapped private"],
    ["::ffff:169.254.169.254", "IPv4-mapped metadata endpoint"],
    ["::ffff:7f00:1", "IPv4-mapped loopback in hex"],
    ["::127.0.0.1", "IPv4-compatible loopback"],
    ["64:ff9b::7f00:1", "NAT64 of 127.0.0.1"],
    ["2002:7f00:1::", "6to4 of 127.0.0.1"],
    ["2001::1", "Teredo"],
    ["fc00::1", "unique local fc00::/7"],
    ["fd00:ec2::254", "unique local: the EC2 IPv6 metadata endpoint"],
    ["fe80::1", "IPv6 link-local"],
    ["ff02::1", "IPv6 multicast"],
    ["2001:db8::1", "IPv6 documentation"],
    ["100::1", "IPv6 discard-only"],
    ["not an address", "not an address at all"],
  ];
  for (const [address, what] of refused) {
    it(`refuses ${address} (${what})`, () => {
      expect(isPublicAddress(address)).toBe(false);
    });
  }

  for (const address of [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
  ]) {
    it(`accepts ${address}`, () => {
      expect(isPublicAddress(address)).toBe(true);
    });
  }
});

describe("checkUrl", () => {
  it("takes a public https URL", () => {
    expect(checkUrl("https://hooks.example.com/agentry?x=1", strict).href).toBe(
      "https://hooks.example.com/agentry?x=1",
    );
  });

  it("refuses what is not an https URL, credentials, and private addresses written in it", () => {
    const cases: [string, RegExp][] = [
      ["not a url", /absolute URL/],
      ["http://hooks.example.com/", /https URL/],
      ["ftp://hooks.example.com/", /https URL/],
      ["https://user:pw@hooks.example.com/", /credentials/],
      ["https://127.0.0.1/", /private, loopback or reserved address \(127\.0\.0\.1\)/],
      ["https://[::1]/", /\(::1\)/],
      ["https://[::ffff:127.0.0.1]/", /private/],
      ["https://169.254.169.254/latest/meta-data", /169\.254\.169\.254/],
      ["https://2130706433/", /127\.0\.0\.1/],
      ["https://0x7f.1/", /127\.0\.0\.1/],
    ];
    for (const [url, reason] of cases) {
      expect(() => checkUrl(url, strict), url).toThrow(OutboundRefusedError);
      expect(() => checkUrl(url, strict), url).toThrow(reason);
    }
  });

  it("lets http and private addresses through when private networks are allowed", () => {
    expect(checkUrl("http://127.0.0.1:8080/hook", lenient).port).toBe("8080");
  });
});

describe("resolveDestination", () => {
  it("refuses a name that resolves to 127.0.0.1 by default, and allows it when private networks are", async () => {
    await expect(resolveDestination(new URL("https://localhost/"), strict)).rejects.toThrow(
      /localhost resolves to a private, loopback or reserved address/,
    );
    const addresses = await resolveDestination(new URL("https://localhost/"), lenient);
    expect(addresses.map((entry) => entry.address)).toContain("127.0.0.1");
  });

  it("refuses a name when any of its addresses is private", async () => {
    const lookup = async () => [
      { address: "93.184.215.14", family: 4 },
      { address: "10.0.0.7", family: 4 },
    ];
    await expect(resolveDestination(new URL("https://mixed.example/"), strict, lookup)).rejects.toThrow(
      /10\.0\.0\.7/,
    );
  });

  it("refuses a name that does not resolve", async () => {
    await expect(
      resolveDestination(new URL("https://no-such-host.invalid/"), strict, async () => {
        throw new Error("ENOTFOUND");
      }),
    ).rejects.toThrow(/could not be resolved/);
  });
});

describe("OutboundClient", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/redirect") {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/private` });
        res.end();
        return;
      }
      res.end("reached");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.close();
  });

  it("refuses a host that resolves to loopback, by default", async () => {
    const client = new OutboundClient(strict);
    try {
      await expect(client.request(`https://localhost:${port}/`)).rejects.toThrow(OutboundRefusedError);
    } finally {
      await client.close();
    }
  });

  it("connects to the address it checked, not to what the name resolves to a moment later", async () => {
    // Public when the URL is accepted, loopback when the connection is made: the rebinding is caught at connect.
    let calls = 0;
    const rebinding = async () => [
      calls++ === 0 ? { address: "93.184.215.14", family: 4 } : { address: "127.0.0.1", family: 4 },
    ];
    const url = new URL(`https://rebinding.example:${port}/`);
    await resolveDestination(url, strict, rebinding);
    const client = new OutboundClient(strict, { lookup: rebinding });
    try {
      const error = await client.request(url.href).catch((e: unknown) => e);
      expect(String((error as Error & { cause?: unknown }).cause ?? error)).toMatch(/127\.0\.0\.1/);
    } finally {
      await client.close();
    }
  });

  it("reaches a loopback server when private networks are allowed, and does not follow redirects", async () => {
    const client = new OutboundClient(lenient);
    try {
      const reached = await client.request(`http://localhost:${port}/`);
      expect(await reached.body.text()).toBe("reached");
      const redirected = await client.request(`http://127.0.0.1:${port}/redirect`);
      expect(redirected.statusCode).toBe(302);
      await redirected.body.dump();
    } finally {
      await client.close();
    }
  });
});
