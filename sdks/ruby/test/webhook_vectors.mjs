// Writes test/webhook_vectors.json: webhook deliveries signed by the Standard Webhooks reference library (npm
// `standardwebhooks`, a dev dependency of this package), each with the result a verifier must give. The Ruby
// tests run on a bare Ruby with no gems to install, so the reference's signatures are fixed in that file instead
// of computed by the reference gem. Run `pnpm --filter @agentry/sdk-ruby vectors` after changing this script.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Webhook } from "standardwebhooks";

const require = createRequire(import.meta.url);
const { version } = require("standardwebhooks/package.json");

// Each secret is derived from a label (whsec_ and the base64 of the label's SHA-256), so the file is the same at
// every run and holds labels rather than anything shaped like a secret.
const LABEL = "agentry webhook test vectors: the endpoint";
const OTHER_LABEL = "agentry webhook test vectors: another endpoint";
const secretOf = (label) => `whsec_${createHash("sha256").update(label).digest("base64")}`;
const SECRET = secretOf(LABEL);
const OTHER = secretOf(OTHER_LABEL);
const ID = "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1";
const TIMESTAMP = 1795000000;

const agent = {
  id: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  name: "Ada",
  bio: ["Counts things"],
  personality: { tone: "dry" },
  knowledge: [],
  goals: ["help"],
  clients: ["discord"],
  settings: { temperature: 0.5 },
  modelProvider: null,
  model: null,
  plugins: [],
  status: "active",
  statusReason: null,
  createdAt: "2026-11-20T09:30:00.000Z",
  updatedAt: "2026-11-20T09:30:00.000Z",
  apiEndpoint: "http://localhost:8080/v1/agents/agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1/messages",
};
const createdAt = new Date(TIMESTAMP * 1000).toISOString();
const PAYLOAD = JSON.stringify({ id: ID, type: "agent.created", createdAt, data: agent });
const UNICODE = JSON.stringify({ id: ID, type: "webhook.test", createdAt, data: { note: "é ü 字 🙂" } });

const sign = (secret, payload, timestamp = TIMESTAMP) =>
  new Webhook(secret).sign(ID, new Date(timestamp * 1000), payload);
const headers = (signature, timestamp = TIMESTAMP) => ({
  "webhook-id": ID,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": signature,
});
const without = (name) => {
  const h = headers(sign(SECRET, PAYLOAD));
  delete h[name];
  return h;
};

const current = sign(SECRET, PAYLOAD);
const stale = sign(OTHER, PAYLOAD);
const v2 = current.replace(/^v1,/, "v2,");
const base = { secretLabel: LABEL, prefixed: true, payload: PAYLOAD, now: TIMESTAMP };

const cases = [
  { name: "valid", ...base, headers: headers(current), expect: "ok" },
  { name: "secret without the whsec_ prefix", ...base, prefixed: false, headers: headers(current), expect: "ok" },
  { name: "non-ASCII body", ...base, payload: UNICODE, headers: headers(sign(SECRET, UNICODE)), expect: "ok" },
  { name: "tampered body", ...base, payload: PAYLOAD.replace("Ada", "Eve"), headers: headers(current), expect: "signature_mismatch" },
  { name: "body parsed and serialized again", ...base, payload: JSON.stringify(JSON.parse(PAYLOAD), null, 2), headers: headers(current), expect: "signature_mismatch" },
  { name: "wrong secret", ...base, headers: headers(stale), expect: "signature_mismatch" },
  { name: "missing webhook-id", ...base, headers: without("webhook-id"), expect: "missing_headers" },
  { name: "missing webhook-timestamp", ...base, headers: without("webhook-timestamp"), expect: "missing_headers" },
  { name: "missing webhook-signature", ...base, headers: without("webhook-signature"), expect: "missing_headers" },
  { name: "timestamp 300 s old", ...base, now: TIMESTAMP + 300, headers: headers(current), expect: "ok" },
  { name: "timestamp 301 s old", ...base, now: TIMESTAMP + 301, headers: headers(current), expect: "timestamp_too_old" },
  { name: "timestamp 300 s ahead", ...base, now: TIMESTAMP - 300, headers: headers(current), expect: "ok" },
  { name: "timestamp 301 s ahead", ...base, now: TIMESTAMP - 301, headers: headers(current), expect: "timestamp_too_new" },
  { name: "rotation: first wrong, second right", ...base, headers: headers(`${stale} ${current}`), expect: "ok" },
  { name: "rotation: first right, second wrong", ...base, headers: headers(`${current} ${stale}`), expect: "ok" },
  { name: "rotation: none right", ...base, headers: headers(`${stale} ${stale}`), expect: "signature_mismatch" },
  { name: "a v2 signature alone is ignored", ...base, headers: headers(v2), expect: "no_signature" },
  { name: "a v2 signature before a v1 one", ...base, headers: headers(`${v2} ${current}`), expect: "ok" },
];

const file = {
  description:
    "Webhook deliveries signed by the Standard Webhooks reference library, each with the result a verifier gives " +
    "at `now` (Unix seconds). The secret is whsec_ (when `prefixed`) and the base64 of SHA-256(`secretLabel`). " +
    "Written by test/webhook_vectors.mjs; do not edit.",
  reference: `standardwebhooks ${version} (npm)`,
  cases,
};
writeFileSync(new URL("webhook_vectors.json", import.meta.url), `${JSON.stringify(file, null, 2)}\n`);
console.log(`test/webhook_vectors.json: ${cases.length} cases from standardwebhooks ${version}`);
