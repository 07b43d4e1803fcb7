"""The hooks' own rules, checked before the run relies on them."""

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hooks import (
    WEBHOOK_URL_PATTERN,
    future,
    keep_audit_rules,
    keep_budget_rules,
    keep_document_rules,
    keep_history_rules,
    keep_idempotency_rules,
    keep_plugin_rules,
    keep_provider_rules,
    keep_usage_rules,
    keep_webhook_rules,
    webhook_url_valid,
)

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


def test_gives_an_empty_or_reversed_usage_range_an_end_one_bucket_after_its_start():
    for to in ["2026-03-01T00:00:00Z", "2026-02-01T00:00:00Z"]:
        query = {"granularity": "day", "from": "2026-03-01T00:00:00Z", "to": to}
        keep_usage_rules(query, NOW)
        assert parse(query["to"]) - parse(query["from"]) == timedelta(days=1)


def test_shortens_a_usage_range_longer_than_its_granularity_allows():
    query = {"granularity": "hour", "from": "2026-01-01T00:00:00Z", "to": "2026-03-01T00:00:00Z"}
    keep_usage_rules(query, NOW)
    assert parse(query["to"]) - parse(query["from"]) == timedelta(hours=1)
    query = {"from": "2020-01-01T00:00:00Z"}  # to is now, more than 400 days later
    keep_usage_rules(query, NOW)
    assert parse(query["to"]) - parse(query["from"]) == timedelta(days=1)
    query = {"from": "2030-01-01T00:00:00Z"}  # to is now, before from
    keep_usage_rules(query, NOW)
    assert "to" in query


def test_moves_the_start_of_a_usage_range_at_the_end_of_the_calendar():
    query = {"from": "9999-12-31T12:00:00+00:00", "to": "9999-12-31T06:00:00+00:00"}
    keep_usage_rules(query, NOW)
    assert parse(query["to"]) - parse(query["from"]) == timedelta(days=1)


def test_leaves_valid_usage_ranges_and_what_the_schema_refuses_alone():
    for query in [
        {"granularity": "day", "from": "2026-03-01T00:00:00Z", "to": "2026-03-31T00:00:00Z"},
        {"to": "2026-03-01T00:00:00Z"},
        {"from": "2026-11-20T00:00:00Z"},
        {"from": "yesterday", "to": "2026-03-01T00:00:00Z"},
        {"granularity": "minute", "from": "2026-03-01T00:00:00Z", "to": "2026-03-01T00:00:00Z"},
        {"granularity": ["day", "hour"], "from": "2026-03-01T00:00:00Z", "to": "2026-03-01T00:00:00Z"},
    ]:
        before = dict(query)
        keep_usage_rules(query, NOW)
        assert query == before


def test_gives_every_valid_idempotency_key_a_new_value_and_leaves_invalid_ones():
    headers = {"Idempotency-Key": "same", "X-Request-Id": "r"}
    keep_idempotency_rules(headers)
    first = headers["Idempotency-Key"]
    keep_idempotency_rules(headers)
    assert headers["Idempotency-Key"] != first and headers["X-Request-Id"] == "r"
    for bad in ["", "a" * 256, "caf\u00e9", "tab\there", "newline\n"]:
        headers = {"idempotency-key": bad}
        keep_idempotency_rules(headers)
        assert headers == {"idempotency-key": bad}


def test_disables_generated_plugins_but_bare_names_that_need_no_config():
    body = {"plugins": ["time", "web-search", {"name": "http"}, {"name": "mcp", "enabled": True, "config": {}}]}
    keep_plugin_rules(body)
    assert body["plugins"] == [
        "time",
        {"name": "web-search", "enabled": False},
        {"name": "http", "enabled": False},
        {"name": "mcp", "enabled": False, "config": {}},
    ]


def test_names_a_served_provider_instead_of_the_local_model_this_run_turns_off():
    body = {"modelProvider": "local", "settings": {"agentry": {"modelProvider": "local"}, "temperature": 1}}
    keep_provider_rules(body)
    assert body == {"modelProvider": "openai", "settings": {"agentry": {"modelProvider": "openai"}, "temperature": 1}}
    character = {"name": "a", "modelProvider": "llama_local"}
    keep_provider_rules(character)
    assert character["modelProvider"] == "openai"
    for kept in [{"modelProvider": "anthropic"}, {"modelProvider": None}, {"modelProvider": 5}, [], "local"]:
        before = json.dumps(kept)
        keep_provider_rules(kept)
        assert json.dumps(kept) == before


def test_leaves_plugin_items_that_break_the_schema_to_be_refused():
    body = {"plugins": [{"name": "x", "enabled": "yes"}, 5, None]}
    keep_plugin_rules(body)
    assert body["plugins"] == [{"name": "x", "enabled": "yes"}, 5, None]
    for other in [{"plugins": "none"}, {"name": "a"}, []]:
        before = json.dumps(other)
        keep_plugin_rules(other)
        assert json.dumps(other) == before


def test_turns_a_documents_generated_bytes_into_text_and_leaves_a_broken_one_of_to_be_refused():
    pdf = {"contentBase64": "JVBERi0=", "contentType": "application/pdf"}
    keep_document_rules(pdf)
    assert pdf == {"text": "The reading room opens at nine.", "contentType": "text/plain"}
    for body in [{"text": "a", "contentBase64": "YQ=="}, {"title": "neither"}, {"text": "as sent"}]:
        before = dict(body)
        keep_document_rules(body)
        assert body == before


def test_makes_a_budgets_limit_a_whole_number_within_bounds_and_leaves_other_values():
    for limit, kept in [(0.2, 1), (-5, 1), (12.6, 13), (1e12, 10_000_000)]:
        body = {"limit": limit}
        keep_budget_rules(body)
        assert body == {"limit": kept}
    for limit in ["ten", True, None]:
        body = {"limit": limit}
        keep_budget_rules(body)
        assert body == {"limit": limit}


def test_gives_an_audit_range_that_does_not_end_after_it_starts_an_end_a_second_later():
    for until in ["2026-11-20T09:30:00Z", "2026-11-19T09:30:00Z"]:
        query = {"since": "2026-11-20T09:30:00Z", "until": until}
        keep_audit_rules(query)
        assert parse(query["until"]) - parse(query["since"]) == timedelta(seconds=1)
    valid = {"since": "2026-11-20T09:30:00Z", "until": "2026-11-21T09:30:00Z"}
    keep_audit_rules(valid)
    assert valid == {"since": "2026-11-20T09:30:00Z", "until": "2026-11-21T09:30:00Z"}
    unparsable = {"since": "yesterday", "until": "2026-11-19T09:30:00Z"}
    keep_audit_rules(unparsable)
    assert unparsable == {"since": "yesterday", "until": "2026-11-19T09:30:00Z"}
