"""Schemathesis hooks for the Agentry API: the rules its OpenAPI document states in words because JSON Schema
cannot state them. Each one turns generated data that breaks such a rule into data that keeps it, so the checks
judge the API by what the document promises and nothing is left out of the run."""

import json
import math
import os
import re
import uuid
from datetime import datetime, timedelta, timezone

import schemathesis

# RFC 3339 starts with a four-digit year; the rest of the text is left as generated.
YEAR = re.compile(r"^(\d{4})(-.*)$", re.DOTALL)


def future(value: str, now: datetime) -> str:
    """`value` moved forward by whole multiples of four years until it lies at least a year ahead.

    Four years keep the day valid (29 February stays in a leap year), and a year's lead is more than any time
    zone offset and any clock difference between this process and the server.
    """
    match = YEAR.match(value)
    if match is None:
        return value
    year = int(match.group(1))
    if year >= now.year + 2:
        return value
    shifted = year + 4 * math.ceil((now.year + 2 - year) / 4)
    return f"{shifted:04d}{match.group(2)}"


@schemathesis.hook
def before_call(context, case, kwargs):
    """`expiresAt` of POST /v1/api-keys must be in the future when the key is created (its description says so);
    a past one is refused with 400, which the schema, knowing no clock, calls valid. A cursor-paged list's query
    keeps the rules between its parameters (`keep_history_rules`), a usage query its range's
    (`keep_usage_rules`). A webhook URL the schema accepts goes to the run's sink (`keep_webhook_rules`). Every
    valid Idempotency-Key is a new one (`keep_idempotency_rules`). An agent's generated plugins are disabled
    (`keep_plugin_rules`), and names a provider this run serves (`keep_provider_rules`)."""
    keep_idempotency_rules(case.headers)
    if isinstance(kwargs, dict):
        keep_idempotency_rules(kwargs.get("headers"))
    key = history_list_key(case)
    if key is not None and isinstance(case.query, dict):
        keep_history_rules(case.query, listed.get(key, set()))
    if (case.operation.method.upper(), case.operation.path) in WEBHOOK_WRITES:
        keep_webhook_rules(case.body, WEBHOOK_SINK)
    if (case.operation.method.upper(), case.operation.path) in AGENT_WRITES:
        keep_plugin_rules(case.body)
    operation = (case.operation.method.upper(), case.operation.path)
    if operation == DOCUMENT_UPLOAD:
        keep_document_rules(case.body)
    if operation == CHAT_COMPLETIONS:
        drop_nul_keys(case.body)
    if operation in SCHEDULE_WRITES:
        keep_schedule_rules(case.body)
    if operation in BUDGET_WRITES:
        keep_budget_rules(case.body)
    if (case.operation.method.upper(), case.operation.path) in PROVIDER_WRITES:
        keep_provider_rules(case.body)
    if case.operation.method.upper() == "GET" and case.operation.path in USAGE_QUERIES and isinstance(case.query, dict):
        keep_usage_rules(case.query, datetime.now(timezone.utc))
    if case.operation.method.upper() == "GET" and case.operation.path in AUDIT_QUERIES and isinstance(case.query, dict):
        keep_audit_rules(case.query)
    if case.operation.method.upper() != "POST" or case.operation.path != "/v1/api-keys":
        return
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("expiresAt"), str):
        body["expiresAt"] = future(body["expiresAt"], datetime.now(timezone.utc))


# Idempotency-Key (docs/api/messages-and-streams.md, "Idempotency"): a key names
# one request, and the same key with another request is refused with 422, which no schema can state. Every key the
# schema accepts becomes a new one, so each generated request is the first of its key; keys the schema refuses
# stay, for the service to refuse.
IDEMPOTENCY_KEY = re.compile(r"^[\x20-\x7e]{1,255}$")


def keep_idempotency_rules(headers: object) -> None:
    if not isinstance(headers, dict):
        return
    for name in list(headers):
        value = headers[name]
        if name.lower() == "idempotency-key" and isinstance(value, str) and IDEMPOTENCY_KEY.fullmatch(value):
            headers[name] = str(uuid.uuid4())


# The cursor-paged lists (docs/api/lists-and-pagination.md, "Cursor pagination"): rules between parameters, and cursors that must be
# items of the list, which no parameter schema can state. Each is keyed by the path parameter that scopes it.
HISTORY_LISTS: dict[str, str | None] = {
    "/v1/agents/{agentId}/conversations": "agentId",
    "/v1/agents/{agentId}/messages": "agentId",
    "/v1/agents/{agentId}/memories": "agentId",
    "/v1/agents/{agentId}/runs": "agentId",
    "/v1/agents/{agentId}/documents": "agentId",
    "/v1/agents/{agentId}/schedules": "agentId",
    "/v1/members": None,
    "/v1/audit-events": None,
    "/v1/webhooks/{webhookId}/deliveries": "webhookId",
}
# Deletions after which a cursor seen before may name nothing.
HISTORY_DELETIONS = (
    "/v1/agents/{agentId}",
    "/v1/agents/{agentId}/conversations/{conversationId}",
    "/v1/agents/{agentId}/memories/{memoryId}",
    "/v1/agents/{agentId}/documents/{documentId}",
    "/v1/agents/{agentId}/schedules/{scheduleId}",
    "/v1/members/{memberId}",
    "/v1/users/{userId}",
    "/v1/webhooks/{webhookId}",
)
CURSOR = re.compile(r"^(?:msg|conv|dlv|mem|doc|sch|usr|aud)_[0-9A-HJKMNP-TV-Z]{26}$")
ID_MAX_LENGTH = 256

# Ids the service listed, by (list path, agent id): the only cursors a list accepts.
listed: dict[tuple[str, str], set[str]] = {}


def conversation_part_valid(value: object) -> bool:
    """Whether a `userId` or `roomId` query value is one the schema accepts."""
    return isinstance(value, str) and 1 <= len(value) <= ID_MAX_LENGTH and "\x00" not in value


def keep_history_rules(query: dict, known: set[str]) -> None:
    """Makes a history list's query keep the rules its description states, leaving any schema violation in it.

    `before` with `after` loses `after`. `conversationId` with `userId` or `roomId` loses those when they are valid
    (else `conversationId`, so their violation stays). A cursor of the right form that the service has not listed
    for this agent is dropped: it names no item of the list.
    """
    if "before" in query and "after" in query:
        del query["after"]
    others = [name for name in ("userId", "roomId") if name in query]
    if "conversationId" in query and others:
        if all(conversation_part_valid(query[name]) for name in others):
            for name in others:
                del query[name]
        else:
            del query["conversationId"]
    for name in ("before", "after"):
        value = query.get(name)
        if isinstance(value, str) and CURSOR.match(value) and value not in known:
            del query[name]


def history_list_key(case) -> tuple[str, str] | None:
    if case.operation.method.upper() != "GET" or case.operation.path not in HISTORY_LISTS:
        return None
    parameter = HISTORY_LISTS[case.operation.path]
    # An account's own list (no path parameter): the run's one account is its scope.
    if parameter is None:
        return (case.operation.path, "")
    scope = (case.path_parameters or {}).get(parameter)
    return (case.operation.path, scope) if isinstance(scope, str) else None


# Agents' plugins (docs/api/plugins-and-tools.md, "Agents' plugins"): an enabled plugin must be one the deployment installs, with a
# config its plugin's schema accepts, which the document states in words (the catalogue is `GET /v1/plugins`). Each
# generated plugin is made disabled, which any name and config may be, unless it is a bare name of a plugin whose
# default config will do; only a valid `enabled` is changed, so a violation of the schema stays one.
AGENT_WRITES = {("POST", "/v1/agents"), ("PATCH", "/v1/agents/{agentId}")}
PLUGINS_BY_NAME = {"time", "calculator", "knowledge"}


def keep_plugin_rules(body: object) -> None:
    """Disables each plugin item of a body, keeping bare names of plugins that need no config."""
    if not isinstance(body, dict) or not isinstance(body.get("plugins"), list):
        return
    body["plugins"] = [disabled_plugin(item) for item in body["plugins"]]


def disabled_plugin(item: object) -> object:
    if isinstance(item, str):
        return item if item in PLUGINS_BY_NAME else {"name": item, "enabled": False}
    if isinstance(item, dict) and isinstance(item.get("enabled", False), bool):
        return {**item, "enabled": False}
    return item


# Providers (docs/api/providers.md, "Choosing a provider and model"): an agent may name a provider this deployment
# has no configuration for; it is kept with a warning, and its messages fail with 502 MODEL_ERROR, as documented,
# which the checks would count as a server fault. run.sh serves openai and anthropic and turns the local model off,
# so a generated agent or character file naming `local` (`llama_local` in a v0.x file, `local` in an export's
# `settings.agentry`) names `openai` instead. The gateway's own tests cover agents of unconfigured providers.
PROVIDER_WRITES = AGENT_WRITES | {("POST", "/v1/agents/import")}
UNSERVED_PROVIDERS = {"local": "openai", "llama_local": "openai"}


def keep_provider_rules(body: object) -> None:
    if not isinstance(body, dict):
        return
    served_instead(body)
    settings = body.get("settings")
    if isinstance(settings, dict) and isinstance(settings.get("agentry"), dict):
        served_instead(settings["agentry"])


def served_instead(fields: dict) -> None:
    provider = fields.get("modelProvider")
    if isinstance(provider, str) and provider in UNSERVED_PROVIDERS:
        fields["modelProvider"] = UNSERVED_PROVIDERS[provider]


# Webhook endpoints (docs/api/webhooks.md, "Outbound safety"): a URL must be one the service may call, which it checks by
# resolving its host; no schema can state that. Every URL the schema accepts (its `pattern`, mirrored here and
# compared with the document's by test_hooks.py, and at most 2,048 characters) is replaced by the run's sink: the
# launcher's `/_conformance/webhooks/`, on loopback, which the service (ALLOW_PRIVATE_NETWORKS=true) may call.
WEBHOOK_WRITES = {("POST", "/v1/webhooks"), ("PATCH", "/v1/webhooks/{webhookId}")}
WEBHOOK_URL_PATTERN = (
    "^[Hh][Tt][Tt][Pp][Ss]?://[^\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f"
    "\\u3000\\ufeff\\u0000]+$"
)
WEBHOOK_URL = re.compile(WEBHOOK_URL_PATTERN)
WEBHOOK_URL_MAX_LENGTH = 2048
WEBHOOK_SINK = os.environ.get("AGENTRY_WEBHOOK_SINK", "http://127.0.0.1:9/schemathesis")


def webhook_url_valid(value: object) -> bool:
    """Whether a `url` is one the schema accepts (`fullmatch`: Python's `$` also matches before a final newline)."""
    return (
        isinstance(value, str) and len(value) <= WEBHOOK_URL_MAX_LENGTH and WEBHOOK_URL.fullmatch(value) is not None
    )


def keep_webhook_rules(body: object, sink: str) -> None:
    """Points a schema-valid `url` at the sink, leaving any schema violation (and every other field) as it is."""
    if isinstance(body, dict) and webhook_url_valid(body.get("url")):
        body["url"] = sink


# The usage queries (docs/api/usage.md, "Queries"): the range must end after it starts and span at most 31 days
# of hours or 400 days of days; without `to` it ends now, without `from` it starts 7 days before its end. These
# mirror the service's rules, which the descriptions state and no parameter schema can.
USAGE_QUERIES = {"/v1/usage", "/v1/agents/{agentId}/usage"}
USAGE_MAX_RANGE = {"hour": timedelta(days=31), "day": timedelta(days=400)}
USAGE_BUCKET = {"hour": timedelta(hours=1), "day": timedelta(days=1)}


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 time as the service reads it, or None for anything else (left for the service to refuse)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def keep_usage_rules(query: dict, now: datetime) -> None:
    """Makes a usage query's range one the service answers, leaving any schema violation in it.

    A range that ends before it starts, or is longer than its granularity allows, gets a `to` one bucket after its
    `from` (or, where that would leave the calendar, a `from` one bucket before its `to`).
    """
    granularity = query.get("granularity", "day")
    if not isinstance(granularity, str) or granularity not in USAGE_MAX_RANGE:
        return
    start, end = parse_time(query.get("from")), parse_time(query.get("to"))
    if "from" in query and start is None or "to" in query and end is None:
        return
    if start is None:
        return  # the default start, 7 days before the end, always makes a valid range
    effective_end = end if end is not None else now
    if timedelta(0) < effective_end - start <= USAGE_MAX_RANGE[granularity]:
        return
    bucket = USAGE_BUCKET[granularity]
    try:
        query["to"] = (start + bucket).isoformat()
    except OverflowError:
        if end is None:
            del query["from"]
        else:
            query["from"] = (end - bucket).isoformat()


# The audit log's queries (docs/api/audit.md): `until` must be later than `since`, which no parameter schema can
# state. A valid pair that is not gets an `until` one second after its `since`.
AUDIT_QUERIES = {"/v1/audit-events", "/v1/audit-events/export"}


def keep_audit_rules(query: dict) -> None:
    start, end = parse_time(query.get("since")), parse_time(query.get("until"))
    if start is None or end is None or end > start:
        return
    try:
        query["until"] = (start + timedelta(seconds=1)).isoformat()
    except OverflowError:
        query["since"] = (end - timedelta(seconds=1)).isoformat()


# A document sent as JSON has its text or its bytes, exactly one (the schema's `oneOf`). Bytes are read as the
# named type (a PDF must be one), which no schema of a string can state: generated bytes become a text of that
# document. A body that breaks the `oneOf` is left as it is, for the service to refuse.
DOCUMENT_UPLOAD = ("POST", "/v1/agents/{agentId}/documents")


def keep_document_rules(body: object) -> None:
    if not isinstance(body, dict) or "contentBase64" not in body or "text" in body:
        return
    del body["contentBase64"]
    body["text"] = "The reading room opens at nine."
    if body.get("contentType") == "application/pdf":
        body["contentType"] = "text/plain"


# A schedule's cron and time zone are checked by a cron library and the IANA database (docs/api/schedules.md),
# which JSON Schema cannot state: a string that is neither becomes one. A cron stays when it is one of a few
# known-good forms; the service's own tests cover the parser.
SCHEDULE_WRITES = {
    ("POST", "/v1/agents/{agentId}/schedules"),
    ("PATCH", "/v1/agents/{agentId}/schedules/{scheduleId}"),
}
KNOWN_CRONS = {"0 9 * * 1-5", "*/5 * * * *", "0 0 1 * *", "30 8 * * *"}
IANA_ZONES = {"UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"}

# A budget's limit is whole in tokens and 0.01 to 10,000,000 in US dollars (docs/api/budgets.md); the unit is the
# budget's, which a PATCH does not repeat: a number outside what both allow becomes one within.
BUDGET_WRITES = {("POST", "/v1/budgets"), ("PATCH", "/v1/budgets/{budgetId}")}
BUDGET_LIMIT_MAX = 10_000_000


# No text of a request body may hold NUL (README.md, the request bodies rules): the OpenAI-compatible body
# admits fields it does not name, whose keys JSON Schema cannot keep free of NUL; such keys are dropped.
CHAT_COMPLETIONS = ("POST", "/v1/chat/completions")


def drop_nul_keys(value: object) -> None:
    """Removes, at every depth, the object keys that hold NUL, and NUL from the strings."""
    if isinstance(value, dict):
        for name in [name for name in value if isinstance(name, str) and "\x00" in name]:
            del value[name]
        for name, item in value.items():
            if isinstance(item, str):
                value[name] = item.replace("\x00", "")
            else:
                drop_nul_keys(item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                value[index] = item.replace("\x00", "")
            else:
                drop_nul_keys(item)


def keep_schedule_rules(body: object) -> None:
    """Makes a schedule's string cron and time zone ones the service accepts."""
    if not isinstance(body, dict):
        return
    if isinstance(body.get("cron"), str) and body["cron"] not in KNOWN_CRONS:
        body["cron"] = "0 9 * * 1-5"
    zone = body.get("timezone")
    if isinstance(zone, str) and zone not in IANA_ZONES:
        body["timezone"] = "UTC"


def keep_budget_rules(body: object) -> None:
    """Makes a budget's numeric limit a whole number from 1 to 10,000,000."""
    if not isinstance(body, dict):
        return
    limit = body.get("limit")
    if isinstance(limit, (int, float)) and not isinstance(limit, bool) and math.isfinite(limit):
        body["limit"] = min(max(round(limit), 1), BUDGET_LIMIT_MAX)


@schemathesis.hook
def after_call(context, case, response):
    """Remembers the ids each history list answered with, and forgets them all after a deletion."""
    if response.status_code != 200:
        return
    if case.operation.method.upper() == "DELETE" and case.operation.path in HISTORY_DELETIONS:
        listed.clear()
        return
    key = history_list_key(case)
    if key is None:
        return
    try:
        items = json.loads(response.content).get("data", [])
    except (ValueError, AttributeError):
        return
    ids = {item["id"] for item in items if isinstance(item, dict) and isinstance(item.get("id"), str)}
    listed.setdefault(key, set()).update(ids)
