"""Usage reports and character files against scripted responses."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict

import httpx
import pytest

from agentry import AgentryError, APIError
from agentry.types import (
    Agent,
    AgentDraft,
    CharacterImport,
    CharacterImportPreview,
    CharacterKnowledgeSource,
    ExportedCharacterFile,
    UsageReport,
)

from .helpers import AGENT, Server, error, ok


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

FIGURES: Dict[str, Any] = {
    "messages": 3,
    "errors": 1,
    "inputTokens": 40,
    "outputTokens": 12,
    "totalTokens": 52,
    "costUsd": 0.0012,
    "latencyMs": {"p50": 812.5, "p95": 2210.0},
    "timeToFirstTokenMs": {"p50": None, "p95": None},
}

REPORT: Dict[str, Any] = {
    "from": "2026-11-24T00:00:00.000Z",
    "to": "2026-11-25T00:00:00.000Z",
    "granularity": "day",
    "groupBy": ["agentId", "model"],
    "buckets": [
        {
            "start": "2026-11-24T00:00:00.000Z",
            "end": "2026-11-25T00:00:00.000Z",
            "groups": [{"agentId": AGENT["id"], "model": "gpt-4o-mini", **FIGURES}],
        }
    ],
    "totals": {**FIGURES, "groups": [{"agentId": AGENT["id"], "model": "gpt-4o-mini", **FIGURES}]},
}

FILE: Dict[str, Any] = {
    "name": "Eliza",
    "bio": "A bot.",
    "lore": ["Grew up in a library"],
    "knowledge": ["fact", {"path": "docs/a.md"}],
    "plugins": ["@elizaos/plugin-sql"],
    "settings": {"secrets": {"KEY": "sk-hidden"}, "voice": "soft"},
}

WARNINGS = [{"field": "knowledge[1]", "issue": "kept, not read"}]

DRAFT = {k: v for k, v in AGENT.items() if k not in ("id", "status", "statusReason", "createdAt", "updatedAt",
                                                        "apiEndpoint")}

EXPORTED: Dict[str, Any] = {
    "name": "Eliza",
    "bio": ["A bot."],
    "style": {"all": ["rhyme"], "chat": ["be brief"], "tone": "warm"},
    "messageExamples": [[{"name": "{{user1}}", "content": {"text": "Hi"}}, {"name": "Eliza",
                                                                             "content": {"text": "Hello!"}}]],
    "knowledge": ["fact", {"path": "docs/a.md"}, {"directory": {"path": "notes"}, "shared": True}],
    "plugins": ["@elizaos/plugin-sql"],
    "settings": {"voice": "soft", "secrets": {}, "agentry": {"personality": {"lore": ["Grew up in a library"]}}},
    "secrets": {},
}


class TestUsage:
    def test_the_account_report_with_group_by_as_a_list_and_datetimes(self) -> None:
        server = Server([ok(REPORT)])
        report = server.client().usage.get(
            from_=datetime(2026, 11, 24, tzinfo=timezone.utc),
            to="2026-11-25",
            granularity="day",
            group_by=["agentId", "model"],
            agent_id=AGENT["id"],
        )
        request = server.requests[0]
        assert request.url.path == "/v1/usage"
        assert dict(request.url.params) == {
            "from": "2026-11-24T00:00:00+00:00",
            "to": "2026-11-25",
            "granularity": "day",
            "groupBy": "agentId,model",
            "agentId": AGENT["id"],
        }
        assert isinstance(report, UsageReport)
        assert report.group_by == ["agentId", "model"]
        group = report.buckets[0].groups[0]
        assert (group.agent_id, group.model, group.messages, group.errors) == (AGENT["id"], "gpt-4o-mini", 3, 1)
        assert group.latency_ms.p50 == 812.5 and group.time_to_first_token_ms.p95 is None
        assert report.totals.total_tokens == 52 and report.totals.groups is not None
        assert report.to_dict() == REPORT

    def test_an_agent_report_and_a_report_without_grouping(self) -> None:
        ungrouped = {**REPORT, "buckets": [{**REPORT["buckets"][0], "groups": [FIGURES]}], "totals": FIGURES}
        del ungrouped["groupBy"]
        server = Server([ok(ungrouped)])
        report = server.client().agents.usage.get(AGENT["id"], granularity="hour")
        assert server.requests[0].url.path == f"/v1/agents/{AGENT['id']}/usage"
        assert dict(server.requests[0].url.params) == {"granularity": "hour"}
        assert report.group_by is None and report.totals.groups is None
        assert report.buckets[0].groups[0].agent_id is None
        assert report.to_dict() == ungrouped


class TestCharacters:
    def test_import_sends_the_file_as_it_is_and_types_the_agent_and_warnings(self) -> None:
        server = Server([ok(AGENT, 201, warnings=WARNINGS)])
        imported = server.client().agents.import_character(FILE)
        assert server.requests[0].method == "POST" and server.requests[0].url.path == "/v1/agents/import"
        assert dict(server.requests[0].url.params) == {}
        assert server.body() == FILE
        assert isinstance(imported, CharacterImport) and isinstance(imported.agent, Agent)
        assert imported.agent.id == AGENT["id"]
        assert [(w.field, w.issue) for w in imported.warnings] == [("knowledge[1]", "kept, not read")]
        assert imported.to_dict()["agent"]["id"] == AGENT["id"]

    def test_a_dry_run_answers_a_preview_of_an_agent_without_id(self) -> None:
        server = Server([ok(DRAFT, warnings=WARNINGS)])
        preview = server.client().agents.import_character(FILE, dry_run=True, extra_body={"username": "eliza"})
        assert dict(server.requests[0].url.params) == {"dryRun": "true"}
        assert server.body() == {**FILE, "username": "eliza"}
        assert isinstance(preview, CharacterImportPreview) and isinstance(preview.agent, AgentDraft)
        assert preview.agent.name == "Ada" and not hasattr(preview.agent, "id")
        assert preview.to_dict() == {"agent": copy.deepcopy(preview.agent.to_dict()), "warnings": WARNINGS}

    def test_use_default_model_asks_for_the_servers_default_model(self) -> None:
        server = Server([ok(DRAFT, warnings=WARNINGS), ok(AGENT, 201, warnings=WARNINGS)])
        client = server.client()
        client.agents.import_character(FILE, dry_run=True, use_default_model=True)
        client.agents.import_character(FILE, use_default_model=True)
        assert dict(server.requests[0].url.params) == {"dryRun": "true", "useDefaultModel": "true"}
        assert dict(server.requests[1].url.params) == {"useDefaultModel": "true"}

    def test_an_import_a_dry_run_or_not_is_retried_like_a_read_under_one_key(self) -> None:
        server = Server([error(503, "AGENT_UNAVAILABLE"), ok(DRAFT, warnings=[])])
        assert server.client().agents.import_character(FILE, dry_run=True).warnings == []
        assert len(server.requests) == 2
        server = Server([error(503, "AGENT_UNAVAILABLE"), ok(AGENT, 201, warnings=[])])
        assert server.client().agents.import_character(FILE).agent.id == AGENT["id"]
        assert len(server.requests) == 2
        assert server.requests[0].headers["idempotency-key"] == server.requests[1].headers["idempotency-key"]

    def test_import_reads_the_file_from_a_path_given_as_str_or_pathlike(self, tmp_path: Path) -> None:
        path = tmp_path / "eliza.character.json"
        path.write_text(json.dumps(FILE, indent=2), encoding="utf-8")
        server = Server([ok(AGENT, 201, warnings=WARNINGS), ok(DRAFT, warnings=WARNINGS)])
        client = server.client()
        assert client.agents.import_character(path).agent.id == AGENT["id"]
        assert client.agents.import_character(str(path), dry_run=True).agent.name == "Ada"
        assert server.body(0) == FILE and server.body(1) == FILE
        assert dict(server.requests[1].url.params) == {"dryRun": "true"}

    @pytest.mark.anyio
    async def test_the_async_client_reads_a_path_too(self, tmp_path: Path, anyio_backend: str) -> None:
        path = tmp_path / "eliza.character.json"
        path.write_text(json.dumps(FILE), encoding="utf-8")
        server = Server([ok(AGENT, 201, warnings=WARNINGS)])
        assert (await server.async_client().agents.import_character(path)).agent.id == AGENT["id"]
        assert server.body() == FILE

    def test_a_path_that_cannot_be_read_or_is_not_an_object_is_refused_before_sending(self, tmp_path: Path) -> None:
        (tmp_path / "broken.json").write_text("{ name: Eliza", encoding="utf-8")
        (tmp_path / "list.json").write_text("[]", encoding="utf-8")
        server = Server([ok(AGENT, 201, warnings=WARNINGS)])
        for name, message in (
            ("missing.json", "Cannot read character from .*missing.json"),
            ("broken.json", "broken.json is not JSON"),
            ("list.json", "list.json does not hold a JSON object"),
        ):
            with pytest.raises(AgentryError, match=message) as raised:
                server.client().agents.import_character(tmp_path / name)
            assert not isinstance(raised.value, APIError)
        with pytest.raises(AgentryError, match="must be a mapping or the path of a JSON file"):
            server.client().agents.import_character(42)  # type: ignore[call-overload]
        assert server.requests == []

    def test_export_reads_the_bare_file_and_writes_it_back_unchanged(self) -> None:
        server = Server([httpx.Response(200, json=EXPORTED, headers={
            "content-disposition": 'attachment; filename="eliza.character.json"'})])
        exported = server.client().agents.export_character(AGENT["id"])
        assert server.requests[0].url.path == f"/v1/agents/{AGENT['id']}/character"
        assert isinstance(exported, ExportedCharacterFile)
        assert exported.name == "Eliza" and exported.settings.secrets == {}
        assert exported.style is not None and exported.style.extra == {"tone": "warm"}
        assert exported.knowledge is not None and exported.knowledge[0] == "fact"
        source = exported.knowledge[1]
        assert isinstance(source, CharacterKnowledgeSource) and source.path == "docs/a.md"
        assert exported.message_examples is not None and exported.message_examples[0][1].content.text == "Hello!"
        # The export is a character file again: importing it sends exactly what was read.
        assert exported.to_dict() == EXPORTED
        server = Server([ok(DRAFT, warnings=[])])
        server.client().agents.import_character(exported.to_dict(), dry_run=True)
        assert server.body() == EXPORTED
