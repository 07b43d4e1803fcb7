"""Schemathesis hooks for the Agentry API: the rules its OpenAPI document states in words because JSON Schema
cannot state them. Each one turns generated data that breaks such a rule into data that keeps it, so the checks
judge the API by what the document promises and nothing is left out of the run."""

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
    a past one is refused with 400, which the schema, knowing no clock, calls valid."""
    if case.operation.method.upper() != "POST" or case.operation.path != "/v1/api-keys":
        return
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("expiresAt"), str):
        body["expiresAt"] = future(body["expiresAt"], datetime.now(timezone.utc))
