"""The sync client against scripted responses: requests as sent, results, errors, retries, pages and streams."""

from __future__ import annotations

import uuid
from typing import Any, Dict, List, Type

import httpx
import pytest

from agentry import (
    NOT_GIVEN,
    Agentry,
    AgentryError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    APIUserAbortError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
)
from agentry.types import (
    Agent,
    AgentSettings,
    ClientIntegration,
    FieldIssue,
    MessageCompletedEvent,
    MessageDeltaEvent,
    MessageStartedEvent,
    PluginConfig,
)

from agentry._streaming import MAX_RECONNECTS

from .helpers import AGENT, BASE_URL, REPLY, Chunks, Server, error, event, ok, sse


def page(items: List[Dict[str, Any]], number: int, has_more: bool, total: int = 5) -> httpx.Response:
    return ok(items, pagination={"page": number, "limit": 2, "total": total, "totalPages": 3, "hasMore": has_more})


class TestConfiguration:
    def test_the_api_key_and_base_url_come_from_the_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("AGENTRY_API_KEY", "agentry_sk_env")
        monkeypatch.setenv("AGENTRY_BASE_URL", "https://api.example.test/v1/")
        client = Agentry()
        assert client.base_url == "https://api.example.test/v1"
        assert client._config.api_key == "agentry_sk_env"
        assert Agentry(api_key="agentry_sk_arg", base_url="http://other/v1")._config.api_key == "agentry_sk_arg"
        assert (client.timeout, client.max_retries, client.max_retry_delay) == (30.0, 2, 60.0)

    def test_no_api_key_is_an_error_naming_the_variable(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("AGENTRY_API_KEY", raising=False)
        with pytest.raises(AgentryError, match="AGENTRY_API_KEY"):
            Agentry()

    @pytest.mark.parametrize(
        "options",
        [{"base_url": "localhost:8080"}, {"timeout": 0}, {"max_retries": -1}, {"max_retries": 1.5},
         {"max_retry_delay": -1}],
    )
    def test_bad_settings_are_refused_at_construction(self, options: Dict[str, Any]) -> None:
        with pytest.raises(AgentryError):
            Agentry(api_key="k", **options)

    def test_with_options_changes_some_settings_and_keeps_the_others(self) -> None:
        client = Agentry(api_key="k", timeout=5, default_headers={"x-team": "a"})
        other = client.with_options(max_retries=0)
        assert (other.timeout, other.max_retries, other._config.default_headers) == (5, 0, {"x-team": "a"})


class TestRequests:
    def test_create_sends_the_fields_given_in_camel_case_and_reads_the_agent(self) -> None:
        server = Server([ok(AGENT, 201)])
        agent = server.client().agents.create(
            name="Ada", bio=["Counts things."], model_provider="openai",
            plugins=["web-search", PluginConfig(name="calendar", enabled=False)],
            settings={"maxTokens": 100}, extra_headers={"X-Request-Id": "mine-1"},
        )
        request = server.requests[0]
        assert (request.method, str(request.url)) == ("POST", f"{BASE_URL}/agents")
        assert server.body() == {
            "name": "Ada", "bio": ["Counts things."], "modelProvider": "openai",
            "plugins": ["web-search", {"name": "calendar", "enabled": False}], "settings": {"maxTokens": 100},
        }
        assert request.headers["authorization"] == "Bearer agentry_sk_test"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["x-request-id"] == "mine-1"
        assert request.headers["user-agent"].startswith("agentry-python/")
        assert isinstance(agent, Agent)
        assert agent.id == AGENT["id"] and agent.model_provider is None and agent.status_reason is None
        assert agent.settings == AgentSettings(temperature=0.5, extra={"theme": "dark"})
        assert agent.clients == ["discord", ClientIntegration(type="telegram", extra={"channel": "@ada"})]
        assert agent.plugins[1] == PluginConfig(name="calendar", enabled=False, config={"region": "eu"})

    def test_models_write_back_the_json_they_read_without_unknown_fields(self) -> None:
        expected = {key: value for key, value in AGENT.items() if key != "aFieldFromTheFuture"}
        assert Agent.from_dict(AGENT).to_dict() == expected

    def test_headers_are_replaced_case_insensitively(self) -> None:
        server = Server([ok(AGENT)])
        client = server.client(default_headers={"user-agent": "my-app/1", "X-Team": "a"})
        client.agents.get(AGENT["id"], extra_headers={"x-team": "b"})
        headers = server.requests[0].headers
        assert headers.get_list("user-agent") == ["my-app/1"]
        assert headers.get_list("x-team") == ["b"]

    def test_update_sends_none_as_null_and_leaves_out_what_was_not_given(self) -> None:
        server = Server([ok(AGENT)])
        server.client().agents.update(AGENT["id"], model=None, status="inactive", name=NOT_GIVEN)
        assert server.requests[0].method == "PATCH"
        assert server.body() == {"model": None, "status": "inactive"}

    def test_extra_body_and_extra_query_reach_the_wire(self) -> None:
        server = Server([ok(AGENT, 201), page([], 1, False)])
        client = server.client()
        client.agents.create(name="Ada", extra_body={"nickname": "A"})
        assert server.body() == {"name": "Ada", "nickname": "A"}
        client.agents.list(limit=5, sort_by="name", extra_query={"order": "asc"})
        assert dict(server.requests[1].url.params) == {"limit": "5", "sortBy": "name", "order": "asc"}

    def test_ids_are_one_escaped_path_segment_and_an_empty_one_is_refused(self) -> None:
        server = Server([ok({"id": "agt_x", "deleted": True})])
        client = server.client()
        assert client.agents.delete("a/b?c").deleted is True
        assert server.requests[0].url.raw_path == b"/v1/agents/a%2Fb%3Fc"
        with pytest.raises(AgentryError, match="agent_id"):
            client.agents.get("")
        assert len(server.requests) == 1

    def test_api_keys(self) -> None:
        created = {"id": "key_1", "name": "ci", "prefix": "agentry_sk_ab", "scopes": ["agents:read"],
                   "fullAccess": False,
                   "createdAt": "2026-11-20T09:30:00Z", "lastUsedAt": None, "expiresAt": None, "createdBy": None,
                   "key": "agentry_sk_x"}
        listed = {key: value for key, value in created.items() if key != "key"}
        server = Server([ok(created, 201), ok([listed]), ok({"id": "key_1", "revoked": True})])
        client = server.client()
        from datetime import datetime, timezone

        key = client.api_keys.create(name="ci", scopes=["agents:read"],
                                     expires_at=datetime(2027, 1, 1, tzinfo=timezone.utc))
        assert server.body(0) == {"name": "ci", "scopes": ["agents:read"], "expiresAt": "2027-01-01T00:00:00+00:00"}
        assert (key.key, key.last_used_at) == ("agentry_sk_x", None)
        assert [k.id for k in client.api_keys.list()] == ["key_1"]
        assert client.api_keys.revoke("key_1").revoked is True
        assert [r.method for r in server.requests] == ["POST", "GET", "DELETE"]

    def test_the_rate_limit_state_of_the_last_response(self) -> None:
        server = Server([ok(AGENT), error(429, "RATE_LIMIT_EXCEEDED", headers={
            "retry-after": "30", "x-ratelimit-limit": "60", "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": "1795000030"})])
        client = server.client(max_retries=0)
        assert client.last_rate_limit is None
        client.agents.get(AGENT["id"])
        assert client.last_rate_limit is not None and client.last_rate_limit.remaining == 59
        with pytest.raises(RateLimitError):
            client.agents.get(AGENT["id"])
        state = client.last_rate_limit
        assert state is not None and (state.limit, state.remaining, state.reset) == (60, 0, 1795000030)
        assert state.reset_at.year == 2026


class TestErrors:
    @pytest.mark.parametrize(
        ("status", "code", "cls"),
        [(400, "INVALID_REQUEST", BadRequestError), (401, "UNAUTHORIZED", AuthenticationError),
         (403, "FORBIDDEN", PermissionDeniedError), (404, "AGENT_NOT_FOUND", NotFoundError),
         (405, "METHOD_NOT_ALLOWED", BadRequestError), (409, "AGENT_INACTIVE", ConflictError),
         (413, "PAYLOAD_TOO_LARGE", BadRequestError), (418, "TEAPOT", APIError),
         (429, "RATE_LIMIT_EXCEEDED", RateLimitError), (502, "MODEL_ERROR", InternalServerError)],
    )
    def test_one_class_per_status_family(self, status: int, code: str, cls: Type[APIError]) -> None:
        server = Server([error(status, code, "what went wrong")])
        with pytest.raises(cls) as raised:
            server.client(max_retries=0).agents.get(AGENT["id"])
        assert type(raised.value) is cls
        assert (raised.value.status, raised.value.code, raised.value.request_id) == (status, code, "req_test")
        assert raised.value.status_code == status
        assert str(raised.value) == f"{status} {code}: what went wrong"

    def test_a_400_names_each_field(self) -> None:
        details = [{"field": "name", "issue": "must not be empty"}, {"field": "nickname", "issue": "unknown field"}]
        server = Server([error(400, "INVALID_REQUEST", details=details)])
        with pytest.raises(BadRequestError) as raised:
            server.client().agents.create(name="")
        assert raised.value.details == [
            FieldIssue("name", "must not be empty"),
            FieldIssue("nickname", "unknown field"),
        ]
        assert len(server.requests) == 1

    def test_a_body_that_is_not_json(self) -> None:
        server = Server([httpx.Response(502, text="<html>bad gateway</html>", headers={"x-request-id": "req_h"}),
                         httpx.Response(200, text="not json")])
        client = server.client(max_retries=0)
        with pytest.raises(InternalServerError) as raised:
            client.agents.get("agt_1")
        assert raised.value.code is None
        assert (raised.value.request_id, raised.value.body) == ("req_h", "<html>bad gateway</html>")
        with pytest.raises(APIError, match="not JSON"):
            client.agents.get("agt_1")


class TestRetries:
    def test_429_is_retried_after_retry_after_then_surfaced(self) -> None:
        server = Server([error(429, "RATE_LIMIT_EXCEEDED", headers={"retry-after": "7"})])
        with pytest.raises(RateLimitError) as raised:
            server.client().agents.create(name="Ada")
        assert len(server.requests) == 3
        assert raised.value.retry_after == 7

    def test_retries_stop_at_the_first_success(self) -> None:
        server = Server([error(503, "AGENT_UNAVAILABLE"), error(500, "INTERNAL_ERROR"), ok(AGENT)])
        assert server.client().agents.get(AGENT["id"]).name == "Ada"
        assert len(server.requests) == 3

    def test_writes_are_retried_like_reads_under_one_idempotency_key(self) -> None:
        for failure in (
            error(500, "INTERNAL_ERROR"),
            error(502, "MODEL_ERROR"),
            error(503, "AGENT_UNAVAILABLE"),
            httpx.ConnectError("refused"),
            httpx.ReadError("reset"),
            httpx.ReadTimeout("slow"),
        ):
            server = Server([failure, failure, ok(AGENT, 201)])
            assert server.client().agents.create(name="Ada").id == AGENT["id"]
            assert len(server.requests) == 3, failure
            keys = {request.headers["idempotency-key"] for request in server.requests}
            assert len(keys) == 1, failure
            assert uuid.UUID(keys.pop()).version == 4

            server = Server([failure, ok(REPLY)])
            assert server.client().agents.messages.send(AGENT["id"], text="hi").text == "Hello there."
            assert len(server.requests) == 2, failure

    def test_every_write_carries_a_new_key_or_the_callers_own_and_a_read_none(self) -> None:
        deleted = ok({"id": AGENT["id"], "deleted": True})
        server = Server([ok(AGENT, 201), ok(AGENT, 201), ok(AGENT), deleted, ok(AGENT)])
        client = server.client()
        client.agents.create(name="Ada")
        client.agents.create(name="Ada")
        client.agents.update(AGENT["id"], name="Eve", idempotency_key="rename-to-eve")
        client.agents.delete(AGENT["id"])
        client.agents.get(AGENT["id"])
        keys = [request.headers.get("idempotency-key") for request in server.requests]
        assert keys[0] != keys[1] and keys[2] == "rename-to-eve"
        assert all(uuid.UUID(key).version == 4 for key in (keys[0], keys[1], keys[3]))
        assert keys[4] is None

    def test_if_match_sends_the_agents_etag_and_a_precondition_failure_is_a_conflict_never_retried(self) -> None:
        server = Server([ok(AGENT), error(412, "PRECONDITION_FAILED")])
        client = server.client()
        client.agents.update(AGENT["id"], name="Eve", if_match="2026-11-29T01:40:00.123Z")
        with pytest.raises(ConflictError) as raised:
            client.agents.delete(AGENT["id"], if_match='W/"2026-11-29T01:40:00.123Z"', extra_headers={"x-extra": "1"})
        assert (raised.value.status, raised.value.code) == (412, "PRECONDITION_FAILED")
        assert len(server.requests) == 2
        assert [r.headers["if-match"] for r in server.requests] == ['W/"2026-11-29T01:40:00.123Z"'] * 2
        assert server.requests[1].headers["x-extra"] == "1"

    def test_in_use_waits_its_retry_after_and_reused_is_a_bad_request_never_retried(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        waits: List[float] = []
        monkeypatch.setattr("agentry._base_client.time.sleep", waits.append)
        server = Server([error(409, "IDEMPOTENCY_KEY_IN_USE", headers={"retry-after": "1"}), ok(AGENT, 201)])
        assert server.client(max_retry_delay=60).agents.create(name="Ada", idempotency_key="k-1").id == AGENT["id"]
        assert waits == [1] and [r.headers["idempotency-key"] for r in server.requests] == ["k-1", "k-1"]

        server = Server([error(422, "IDEMPOTENCY_KEY_REUSED")])
        with pytest.raises(BadRequestError) as raised:
            server.client().agents.create(name="Eve", idempotency_key="k-1")
        assert (raised.value.status, raised.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")
        assert len(server.requests) == 1

    def test_lasting_conditions_are_never_retried(self) -> None:
        for answer in (error(409, "AGENT_INACTIVE"), error(403, "INSUFFICIENT_QUOTA")):
            server = Server([answer])
            with pytest.raises(APIError):
                server.client().agents.messages.send(AGENT["id"], text="hi")
            assert len(server.requests) == 1

    def test_a_broken_connection_or_a_timeout_is_retried_until_the_retries_are_spent(self) -> None:
        def send(client: Agentry) -> object:
            return client.agents.messages.send(AGENT["id"], text="hi")

        def get(client: Agentry) -> object:
            return client.agents.get(AGENT["id"])

        for failure in (httpx.ReadError("reset"), httpx.ReadTimeout("slow")):
            for call in (send, get):
                server = Server([failure])
                with pytest.raises(APIConnectionError):
                    call(server.client())
                assert len(server.requests) == 3

    def test_a_timeout_is_an_api_timeout_error_naming_the_limit(self) -> None:
        server = Server([httpx.ReadTimeout("slow")])
        with pytest.raises(APITimeoutError, match="1.5 s") as raised:
            server.client(timeout=1.5, max_retries=0).agents.get(AGENT["id"])
        assert raised.value.status is None and isinstance(raised.value.__cause__, httpx.ReadTimeout)
        assert raised.value.status_code is None

    def test_max_retries_per_call(self) -> None:
        server = Server([error(500, "INTERNAL_ERROR")])
        with pytest.raises(InternalServerError):
            server.client().agents.get(AGENT["id"], max_retries=0)
        assert len(server.requests) == 1


class TestPages:
    def test_iterating_the_first_page_walks_every_page(self) -> None:
        a = [{**AGENT, "id": f"agt_{n}"} for n in range(5)]
        server = Server([page(a[0:2], 1, True), page(a[2:4], 2, True), page(a[4:], 3, False)])
        first = server.client().agents.list(limit=2, sort_by="name", order="asc")
        assert [x.id for x in first.data] == ["agt_0", "agt_1"] and first.has_next_page()
        assert first.pagination.total_pages == 3
        assert [x.id for x in first] == [f"agt_{n}" for n in range(5)]
        assert [dict(r.url.params) for r in server.requests] == [
            {"limit": "2", "sortBy": "name", "order": "asc"},
            {"limit": "2", "sortBy": "name", "order": "asc", "page": "2"},
            {"limit": "2", "sortBy": "name", "order": "asc", "page": "3"},
        ]

    def test_page_by_page_and_the_end(self) -> None:
        server = Server([page([AGENT], 2, True), page([AGENT], 3, False)])
        first = server.client().agents.list(page=2)
        assert [p.pagination.page for p in first.iter_pages()] == [2, 3]
        last = first.next_page()
        assert not last.has_next_page()
        with pytest.raises(AgentryError, match="no next page"):
            last.next_page()

    def test_an_empty_listing(self) -> None:
        server = Server([page([], 1, False, total=0)])
        assert list(server.client().agents.list(status="inactive")) == []


class TestStreams:
    STARTED = {"id": REPLY["id"], "agentId": AGENT["id"], "userId": "u1", "roomId": None}

    def test_events_in_order_and_the_helpers(self) -> None:
        server = Server([sse(event(1, "message.started", self.STARTED) + ": ping\n\n",
                             event(2, "message.delta", {"text": "Hello"}),
                             event(3, "some.future.event", {}),
                             event(4, "message.delta", {"text": " there."}),
                             event(5, "message.completed", REPLY))])
        stream = server.client().agents.messages.stream(AGENT["id"], text="hi", user_id="u1")
        assert server.requests == []
        with stream:
            events = list(stream)
        assert server.body() == {"text": "hi", "userId": "u1", "stream": True, "onDisconnect": "continue"}
        assert server.requests[0].headers["accept"] == "text/event-stream"
        assert [type(e) for e in events] == [MessageStartedEvent, MessageDeltaEvent, MessageDeltaEvent,
                                             MessageCompletedEvent]
        assert [e.id for e in events] == ["1", "2", "4", "5"]
        assert events[1].to_dict() == {"type": "message.delta", "id": "2", "data": {"text": "Hello"}}
        assert stream.text() == "Hello there."
        assert stream.final_message().usage.total_tokens == 7
        assert stream.request_id == "req_stream"
        with pytest.raises(AgentryError, match="iterated once"):
            iter(stream)

    def test_the_text_helper_reads_the_whole_stream(self) -> None:
        server = Server([sse(event(1, "message.delta", {"text": "a"}), event(2, "message.completed", REPLY))])
        assert server.client().agents.messages.stream(AGENT["id"], text="hi").text() == "a"

    def test_an_error_event_raises_the_class_of_its_code_and_is_not_retried(self) -> None:
        server = Server([sse(event(1, "message.delta", {"text": "Echo: "}),
                             event(2, "error", {"code": "AGENT_UNAVAILABLE", "message": "provider went away"}))])
        stream = server.client().agents.messages.stream(AGENT["id"], text="hi")
        received = []
        with pytest.raises(InternalServerError) as raised:
            for e in stream:
                received.append(e)
        assert (raised.value.status, raised.value.code, raised.value.request_id) == (503, "AGENT_UNAVAILABLE",
                                                                                       "req_stream")
        assert len(received) == 1 and len(server.requests) == 1
        with pytest.raises(InternalServerError):
            stream.final_message()

    def test_failures_before_the_stream_starts_are_raised_when_it_is_used_and_retried_as_send(self) -> None:
        server = Server([error(409, "AGENT_INACTIVE")])
        stream = server.client().agents.messages.stream(AGENT["id"], text="hi")
        with pytest.raises(ConflictError):
            list(stream)
        assert len(server.requests) == 1
        server = Server([error(503, "AGENT_UNAVAILABLE"), sse(event(1, "message.completed", REPLY))])
        assert server.client().agents.messages.stream(AGENT["id"], text="hi").final_message().id == REPLY["id"]
        assert len(server.requests) == 2
        assert server.requests[0].headers["idempotency-key"] == server.requests[1].headers["idempotency-key"]
        server = Server([sse(event(1, "message.completed", REPLY))])
        server.client().agents.messages.stream(AGENT["id"], text="hi", idempotency_key="story-1").final_message()
        assert server.requests[0].headers["idempotency-key"] == "story-1"

    def test_a_stream_that_ends_early_breaks_or_goes_silent(self) -> None:
        server = Server([sse(event(1, "message.delta", {"text": "a"}))])
        with pytest.raises(APIConnectionError, match="before the reply was complete"):
            server.client().agents.messages.stream(AGENT["id"], text="hi").text()
        server = Server([sse(event(1, "message.delta", {"text": "a"}), httpx.ReadError("reset"))])
        with pytest.raises(APIConnectionError, match="broke"):
            server.client().agents.messages.stream(AGENT["id"], text="hi").text()
        server = Server([sse(event(1, "message.delta", {"text": "a"}), httpx.ReadTimeout("silent"))])
        with pytest.raises(APITimeoutError, match="sent nothing for 2 s"):
            server.client(timeout=2).agents.messages.stream(AGENT["id"], text="hi").text()

    def test_a_dropped_stream_is_resumed_after_its_last_event_unseen_by_the_loop(self) -> None:
        server = Server([
            sse(event(1, "message.started", self.STARTED), event(2, "message.delta", {"text": "Hel"}),
                httpx.ReadError("reset")),
            sse(event(2, "message.delta", {"text": "Hel"}), event(3, "message.delta", {"text": "lo"}),
                event(4, "message.completed", REPLY)),
        ])
        stream = server.client().agents.messages.stream(AGENT["id"], text="hi", idempotency_key="story-2")
        assert [e.id for e in stream] == ["1", "2", "3", "4"]
        assert stream.text() == "Hello"
        resumed = server.requests[1]
        assert resumed.method == "GET"
        assert resumed.url.path == f"/v1/agents/{AGENT['id']}/messages/{REPLY['id']}/events"
        assert resumed.headers["last-event-id"] == "2"
        assert "idempotency-key" not in resumed.headers

    def test_a_stream_is_resumed_a_few_times_then_fails_and_a_refused_resumption_is_raised(self) -> None:
        dropped = sse(event(1, "message.started", self.STARTED), httpx.ReadError("reset"))
        server = Server([dropped, lambda request: sse(httpx.ReadError("reset"))])
        with pytest.raises(APIConnectionError, match="broke"):
            server.client(max_retries=0).agents.messages.stream(AGENT["id"], text="hi").text()
        assert len(server.requests) == 1 + MAX_RECONNECTS
        server = Server([sse(event(1, "message.started", self.STARTED), httpx.ReadError("reset")),
                         error(404, "STREAM_NOT_FOUND")])
        with pytest.raises(NotFoundError):
            server.client(max_retries=0).agents.messages.stream(AGENT["id"], text="hi", on_disconnect="cancel").text()
        assert server.body(0)["onDisconnect"] == "cancel"

    def test_leaving_early_closes_the_connection(self) -> None:
        body = Chunks([
            event(1, "message.delta", {"text": "a"}).encode(),
            event(2, "message.delta", {"text": "b"}).encode(),
            event(3, "message.completed", REPLY).encode(),
        ])
        server = Server([sse(body=body)])
        with server.client().agents.messages.stream(AGENT["id"], text="hi") as stream:
            for _ in stream:
                break
        assert body.closed
        with pytest.raises(APIUserAbortError):
            stream.text()
