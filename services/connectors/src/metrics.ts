import { Counter, Histogram, type Registry } from "prom-client";
import type { Platform } from "./domain/clients.js";

/** Seconds from a platform message's date to its reply: the model's time dominates, a queue shows as minutes. */
const LAG_BUCKETS = [0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300, 900];

/** Why a platform message was not answered as it should have been. */
export type ConnectorFailure = "turn" | "send";

/**
 * The connectors' Prometheus metrics, per platform, in the registry of the process's `/metrics` (the connectors
 * service's own, or the all-in-one server's). Without a registry every call does nothing.
 */
export class ConnectorMetrics {
  private readonly received: Counter<"platform"> | undefined;
  private readonly replies: Counter<"platform"> | undefined;
  private readonly failures: Counter<"platform" | "stage"> | undefined;
  private readonly lag: Histogram<"platform"> | undefined;

  constructor(registry?: Registry) {
    if (!registry) return;
    const registers = [registry];
    this.received = new Counter({
      name: "agentry_connector_messages_received_total",
      help: "Platform messages taken as turns, after the respondIn and allowedChats filters; one already answered is not.",
      labelNames: ["platform"],
      registers,
    });
    this.replies = new Counter({
      name: "agentry_connector_replies_sent_total",
      help: "Replies the platform accepted, by platform; a reply split into several messages counts once.",
      labelNames: ["platform"],
      registers,
    });
    this.failures = new Counter({
      name: "agentry_connector_failures_total",
      help: "Messages not answered as asked, by platform and stage: turn (the apology was sent) or send.",
      labelNames: ["platform", "stage"],
      registers,
    });
    this.lag = new Histogram({
      name: "agentry_connector_reply_lag_seconds",
      help: "Time from the platform message's own date to the platform accepting the reply's last message.",
      labelNames: ["platform"],
      buckets: LAG_BUCKETS,
      registers,
    });
  }

  messageReceived(platform: Platform): void {
    this.received?.inc({ platform });
  }

  replySent(platform: Platform, lagSeconds: number): void {
    this.replies?.inc({ platform });
    this.lag?.observe({ platform }, Math.max(0, lagSeconds));
  }

  failed(platform: Platform, stage: ConnectorFailure): void {
    this.failures?.inc({ platform, stage });
  }
}
