"""The hooks' own rules, checked before the run relies on them."""

import json
from datetime import datetime, timezone
from pathlib import Path

from hooks import WEBHOOK_URL_PATTERN, future, keep_history_rules, keep_webhook_rules, webhook_url_valid

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_moves_past_and_near_dates_at_least_a_year_ahead_keeping_the_rest():
    for value in ["2001-01-01T00:00:00Z", "2026-11-25T11:59:59.123456+14:00", "2027-12-31T23:59:59-12:00"]:
        moved = future(value, NOW)
        assert moved[4:] == value[4:]
        assert parse(moved) > NOW.replace(year=NOW.year + 1)


def test_keeps_a_leap_day_in_a_leap_year():
    moved = future("2000-02-29T08:30:00Z", NOW)
    assert parse(moved).day == 29


def test_leaves_far_dates_and_what_is_not_a_date_alone():
    for value in ["2099-01-01T00:00:00Z", "tomorrow", "", "12-01-2001"]:
        assert future(value, NOW) == value


CURSOR = "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1"
OTHER = "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H2"


def test_keeps_one_cursor_and_only_cursors_the_service_listed():
    query = {"before": CURSOR, "after": OTHER, "limit": 5}
    keep_history_rules(query, {CURSOR, OTHER})
    assert query == {"before": CURSOR, "limit": 5}
    query = {"after": OTHER}
    keep_history_rules(query, {CURSOR})
    assert query == {}


def test_leaves_cursors_that_break_the_schema_to_be_refused():
    for value in ["msg_1", "", 7]:
        query = {"before": value}
        keep_history_rules(query, set())
        assert query == {"before": value}


def test_keeps_a_conversation_filter_apart_from_user_and_room_and_any_violation():
    query = {"conversationId": "conv_x", "userId": "u", "roomId": "r"}
    keep_history_rules(query, set())
    assert query == {"conversationId": "conv_x"}
    for bad in ["", "x" * 257, "a\x00b"]:
        query = {"conversationId": "conv_x", "userId": bad}
        keep_history_rules(query, set())
        assert query == {"userId": bad}
    query = {"userId": "u", "roomId": "r"}
    keep_history_rules(query, set())
    assert query == {"userId": "u", "roomId": "r"}


DOCUMENT = Path(__file__).resolve().parents[2] / "sdks" / "openapi.json"
SINK = "http://127.0.0.1:1/sink"


def test_mirrors_the_documents_webhook_url_pattern():
    schemas = json.loads(DOCUMENT.read_text())["components"]["schemas"]
    for request in ("CreateWebhookRequest", "UpdateWebhookRequest"):
        url = schemas[request]["properties"]["url"]
        assert url["pattern"] == WEBHOOK_URL_PATTERN
        assert url["maxLength"] == 2048


def test_points_schema_valid_webhook_urls_at_the_sink():
    for url in ["https://example.com/hook", "HTTP://10.0.0.1:8080/x?y=1", "https://" + "x" * 2040]:
        body = {"url": url, "events": ["*"]}
        keep_webhook_rules(body, SINK)
        assert body == {"url": SINK, "events": ["*"]}


def test_leaves_webhook_urls_that_break_the_schema_to_be_refused():
    for url in ["ftp://example.com", "https://exa mple.com", "https://x\n", "https://", "https://" + "x" * 2041, 7, None]:
        assert not webhook_url_valid(url)
        body = {"url": url}
        keep_webhook_rules(body, SINK)
        assert body == {"url": url}
    body = {"events": ["*"]}
    keep_webhook_rules(body, SINK)
    assert body == {"events": ["*"]}
    keep_webhook_rules(["not", "an", "object"], SINK)


def test_keeps_delivery_cursors_the_service_listed():
    listed = "dlv_01JCZ3S8Q5M2T7V9X0B4D6F8H1"
    query = {"before": listed, "after": "dlv_01JCZ3S8Q5M2T7V9X0B4D6F8H2"}
    keep_history_rules(query, {listed})
    assert query == {"before": listed}
    query = {"after": "dlv_01JCZ3S8Q5M2T7V9X0B4D6F8H2"}
    keep_history_rules(query, {listed})
    assert query == {}
