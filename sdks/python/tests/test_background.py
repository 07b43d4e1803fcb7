"""Background messages against scripted responses: the 202 send, the read by state, and the wait with its pauses."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from agentry import AgentryError, APITimeoutError
from agentry import _polling
from agentry.types import BackgroundMessage, BackgroundMessageAccepted, HistoryMessage

from .helpers import AGENT, REPLY, Server, ok

AGENT_ID = AGENT["id"]
MESSAGE_ID = "msg_01JAAAAAAAAAAAAAAAAAAAAAAA"
PENDING: Dict[str, Any] = {"id": MESSAGE_ID, "agentId": AGENT_ID, "userId": None, "roomId": None, "status": "pending"}
FAILED: Dict[str, Any] = {**PENDING, "status": "failed", "error": {"code": "MODEL_ERROR", "message": "no"}}
COMPLETED: Dict[str, Any] = {**REPLY, "id": MESSAGE_ID, "status": "completed"}


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> List[float]:
    """The pauses of a wait, recorded instead of slept."""
    slept: List[float] = []
    monkeypatch.setattr(_polling, "_sleep", slept.append)
    return slept


def test_send_background_posts_background_true_with_a_key_and_answers_the_accepted_id() -> None:
    server = Server([ok({"id": MESSAGE_ID, "status": "pending"}, status=202)])
    accepted = server.client().agents.messages.send_background(AGENT_ID, text="work", user_id="u1")
    assert accepted == BackgroundMessageAccepted(id=MESSAGE_ID, status="pending")
    assert server.body() == {"text": "work", "userId": "u1", "background": True}
    assert server.requests[0].headers["idempotency-key"]


def test_send_and_stream_take_no_background_argument() -> None:
    messages = Server([]).client().agents.messages
    with pytest.raises(TypeError):
        messages.send(AGENT_ID, text="x", background=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        messages.stream(AGENT_ID, text="x", background=True)  # type: ignore[call-arg]


def test_get_background_reads_each_state_and_refuses_a_stored_message() -> None:
    stored = {**REPLY, "id": MESSAGE_ID, "conversationId": "conv_1", "role": "assistant"}
    server = Server([ok(PENDING), ok(COMPLETED), ok(FAILED), ok(stored)])
    messages = server.client().agents.messages
    assert messages.get_background(AGENT_ID, MESSAGE_ID).status == "pending"
    done = messages.get_background(AGENT_ID, MESSAGE_ID)
    assert (done.status, done.text, done.error) == ("completed", REPLY["text"], None)
    failed = messages.get_background(AGENT_ID, MESSAGE_ID)
    assert failed.error is not None and (failed.status, failed.error.code) == ("failed", "MODEL_ERROR")
    with pytest.raises(AgentryError, match="get\\(\\)"):
        messages.get_background(AGENT_ID, MESSAGE_ID)
    assert str(server.requests[0].url).endswith(f"/agents/{AGENT_ID}/messages/{MESSAGE_ID}")
    # get reads the stored message as before.
    assert isinstance(Server([ok(stored)]).client().agents.messages.get(AGENT_ID, MESSAGE_ID), HistoryMessage)


def test_wait_pauses_twice_as_long_each_time_up_to_the_longest(pauses: List[float]) -> None:
    server = Server([ok(PENDING)] * 6 + [ok(COMPLETED)])
    message = server.client().agents.messages.wait_for_background(AGENT_ID, MESSAGE_ID, poll_interval=1)
    assert isinstance(message, BackgroundMessage) and message.status == "completed"
    assert len(server.requests) == 7
    assert pauses == [1, 2, 4, 5, 5, 5]


def test_wait_answers_a_failed_message_as_it_is(pauses: List[float]) -> None:
    server = Server([ok(PENDING), ok(FAILED)])
    message = server.client().agents.messages.wait_for_background(AGENT_ID, MESSAGE_ID)
    assert message.error is not None and message.error.code == "MODEL_ERROR"
    assert pauses == [0.5]


def test_wait_gives_up_after_max_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    monkeypatch.setattr(_polling, "_monotonic", lambda: now[0])
    monkeypatch.setattr(_polling, "_sleep", lambda seconds: now.__setitem__(0, now[0] + seconds))
    server = Server([ok(PENDING)])
    with pytest.raises(APITimeoutError, match="after 3 seconds"):
        server.client().agents.messages.wait_for_background(AGENT_ID, MESSAGE_ID, poll_interval=1, max_wait=3)
    # Reads at 0, 1, 3 (the last pause cut to what was left).
    assert len(server.requests) == 3
    with pytest.raises(AgentryError, match="poll_interval"):
        server.client().agents.messages.wait_for_background(AGENT_ID, MESSAGE_ID, poll_interval=0)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_async_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: List[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(_polling, "_async_sleep", sleep)
    server = Server([ok({"id": MESSAGE_ID, "status": "pending"}, status=202), ok(PENDING), ok(COMPLETED)])
    messages = server.async_client().agents.messages
    accepted = await messages.send_background(AGENT_ID, text="work")
    message = await messages.wait_for_background(AGENT_ID, accepted.id, poll_interval=0.25)
    assert (message.status, message.text) == ("completed", REPLY["text"])
    assert slept == [0.25]
