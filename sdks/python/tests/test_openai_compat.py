"""OpenAI's own Python SDK against a live service: any agent through Chat Completions, with only a base URL and
an API key (docs/api/standard-clients.md). The service is the conformance launcher's: the real gateway whose
agents' model is a local server speaking OpenAI's wire format.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

import httpx
import pytest
from openai import AuthenticationError, BadRequestError, NotFoundError, OpenAI

from .conformance import Launcher


@pytest.fixture(scope="module")
def service() -> Iterator[Dict[str, Any]]:
    launcher = Launcher()
    try:
        yield launcher.ready()
    finally:
        launcher.stop()


@pytest.fixture(scope="module")
def agent_id(service: Dict[str, Any]) -> str:
    response = httpx.post(
        f"{service['baseURL']}/agents",
        headers={"authorization": f"Bearer {service['keys']['full']}"},
        json={"name": "Ada", "bio": ["Counts things"]},
    )
    assert response.status_code == 201, response.text
    agent: str = response.json()["data"]["id"]
    return agent


def openai_client(service: Dict[str, Any], key: str = "full") -> OpenAI:
    return OpenAI(base_url=service["baseURL"], api_key=service["keys"][key], max_retries=0)


def stored_texts(service: Dict[str, Any], agent_id: str, user: str) -> List[str]:
    response = httpx.get(
        f"{service['baseURL']}/agents/{agent_id}/messages",
        headers={"authorization": f"Bearer {service['keys']['full']}"},
        params={"userId": user, "roomId": "openai", "order": "asc"},
    )
    assert response.status_code == 200, response.text
    return [message["text"] for message in response.json()["data"]]


def test_a_chat_completion_is_the_agents_reply_and_a_turn_in_history(service: Dict[str, Any], agent_id: str) -> None:
    client = openai_client(service)
    assert agent_id in [model.id for model in client.models.list()]

    completion = client.chat.completions.create(
        model=agent_id,
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hello from Python"},
        ],
        user="py-json",
    )
    assert completion.object == "chat.completion"
    assert completion.model == agent_id
    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content == "Echo: Hello from Python"
    assert completion.usage is not None and completion.usage.total_tokens > 0
    assert stored_texts(service, agent_id, "py-json") == ["Hello from Python", "Echo: Hello from Python"]


def test_a_streamed_completion_arrives_in_chunks_with_usage(service: Dict[str, Any], agent_id: str) -> None:
    stream = openai_client(service).chat.completions.create(
        model=agent_id,
        messages=[{"role": "user", "content": "Stream this please"}],
        stream=True,
        stream_options={"include_usage": True},
        user="py-stream",
    )
    chunks = list(stream)
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == "Echo: Stream this please"
    assert [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices and chunk.choices[0].finish_reason] == [
        "stop"
    ]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert stored_texts(service, agent_id, "py-stream") == ["Stream this please", "Echo: Stream this please"]


def test_errors_are_openais_typed_errors(service: Dict[str, Any], agent_id: str) -> None:
    messages: Any = [{"role": "user", "content": "Hi"}]
    with pytest.raises(AuthenticationError) as unauthenticated:
        openai_client(service, "revoked").chat.completions.create(model=agent_id, messages=messages)
    assert unauthenticated.value.status_code == 401
    assert unauthenticated.value.code == "UNAUTHORIZED"

    with pytest.raises(NotFoundError) as unknown:
        openai_client(service).chat.completions.create(model="gpt-4o", messages=messages)
    assert unknown.value.code == "AGENT_NOT_FOUND"
    assert unknown.value.param == "model"

    with pytest.raises(BadRequestError) as with_tools:
        openai_client(service).chat.completions.create(
            model=agent_id,
            messages=messages,
            tools=[{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
        )
    assert with_tools.value.param == "tools"
