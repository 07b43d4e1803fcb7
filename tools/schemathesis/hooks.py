"""Schemathesis hooks for the Agentry API: the rules its OpenAPI document states in words because JSON Schema
cannot state them. Each one turns generated data that breaks such a rule into data that keeps it, so the checks
judge the API by what the document promises and nothing is left out of the run."""

import json
import math
import re
from datetime import datetime, timezone

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
    a past one is refused with 400, which the schema, knowing no clock, calls valid. A history list's query keeps
    the rules between its parameters (`keep_history_rules`)."""
    key = history_list_key(case)
    if key is not None and isinstance(case.query, dict):
        keep_history_rules(case.query, listed.get(key, set()))
    if case.operation.method.upper() != "POST" or case.operation.path != "/v1/api-keys":
        return
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("expiresAt"), str):
        body["expiresAt"] = future(body["expiresAt"], datetime.now(timezone.utc))


# The history lists (decisions.md, "Cursor pagination"): rules between parameters, and cursors that must be items
# of the list, which no parameter schema can state.
HISTORY_LISTS = ("/v1/agents/{agentId}/conversations", "/v1/agents/{agentId}/messages")
# Deletions after which a cursor seen before may name nothing.
HISTORY_DELETIONS = (
    "/v1/agents/{agentId}",
    "/v1/agents/{agentId}/conversations/{conversationId}",
    "/v1/users/{userId}",
)
CURSOR = re.compile(r"^(?:msg|conv)_[0-9A-HJKMNP-TV-Z]{26}$")
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
    agent_id = (case.path_parameters or {}).get("agentId")
    return (case.operation.path, agent_id) if isinstance(agent_id, str) else None


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
