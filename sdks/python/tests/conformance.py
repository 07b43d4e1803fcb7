"""The Python runner of the cross-SDK conformance scenario (tools/conformance/README.md), for both clients.

A port of the reference runner (sdks/typescript/test/conformance/runner.ts): the same reference resolution,
pattern matcher and result shapes; only the SDK calls are Python's.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import subprocess
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Tuple, Union

from agentry.types import MessageDeltaEvent
from agentry import AgentryError, APIError, Agentry, AsyncAgentry

REPO_ROOT = Path(__file__).resolve().parents[3]
SCENARIO_PATH = REPO_ROOT / "tools" / "conformance" / "scenario.json"


def load_scenario() -> Dict[str, Any]:
    with open(SCENARIO_PATH, encoding="utf-8") as file:
        scenario: Dict[str, Any] = json.load(file)
    return scenario


class Launcher:
    """The live service of tools/conformance/serve.ts, stopped by closing its standard input.

    Spawning returns at once; ``ready()`` waits for the launcher's line, so several can start side by side.
    """

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["node", "--import", "tsx", "tools/conformance/serve.ts"],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._stderr: List[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self._info: Optional[Dict[str, Any]] = None

    def ready(self) -> Dict[str, Any]:
        """The launcher's JSON line, once it is listening."""
        if self._info is None:
            assert self.process.stdout is not None
            line = self.process.stdout.readline()
            if not line:
                self.process.wait(timeout=10)
                raise RuntimeError(
                    f"the conformance launcher exited ({self.process.returncode}) before it was ready:\n"
                    + b"".join(self._stderr).decode("utf-8", "replace")
                )
            self._info = json.loads(line)
        return self._info

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for chunk in iter(self.process.stderr.readline, b""):
            self._stderr.append(chunk)

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_REFERENCE = re.compile(r"^\$[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*$")


def resolve(value: Any, variables: Mapping[str, Any]) -> Any:
    """Replaces every string value ``$name.path`` by the value it names; keys are left alone."""
    if isinstance(value, str) and _REFERENCE.match(value):
        current: Any = variables
        for part in value[1:].split("."):
            if isinstance(current, dict) and part in current:
                current = current[part]
            elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
                current = current[int(part)]
            else:
                raise AssertionError(f"unresolved reference {value}")
        return current
    if isinstance(value, list):
        return [resolve(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: resolve(item, variables) for key, item in value.items()}
    return value


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_MISSING = object()


def mismatch(pattern: Any, actual: Any, path: str = "$") -> Optional[str]:
    """Where ``actual`` fails to match ``pattern`` (README, "Patterns"), or ``None`` when it matches."""
    shown = "(absent)" if actual is _MISSING else json.dumps(actual)
    if pattern is None:
        return None if actual is None or actual is _MISSING else f"{path}: expected null, got {shown}"
    if isinstance(pattern, list):
        if not isinstance(actual, list):
            return f"{path}: expected an array, got {shown}"
        if len(actual) != len(pattern):
            return f"{path}: expected {len(pattern)} items, got {len(actual)}: {shown}"
        for index, item in enumerate(pattern):
            found = mismatch(item, actual[index], f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(pattern, dict) and pattern and all(key.startswith("$") for key in pattern):
        for op, operand in pattern.items():
            fail = f"{path}: expected {op} {json.dumps(operand)}, got {shown}"
            if op == "$regex":
                if not isinstance(actual, str) or not re.search(operand, actual):
                    return fail
            elif op == "$type":
                kind = "absent" if actual is _MISSING else _type_of(actual)
                if kind != operand and not (operand == "number" and kind == "integer"):
                    return fail
            elif op in ("$gte", "$lte", "$gt", "$lt"):
                ok = _is_number(actual) and {
                    "$gte": lambda: actual >= operand,
                    "$lte": lambda: actual <= operand,
                    "$gt": lambda: actual > operand,
                    "$lt": lambda: actual < operand,
                }[op]()
                if not ok:
                    return fail
            elif op == "$length":
                if not isinstance(actual, (list, str)) or len(actual) != operand:
                    return fail
            elif op == "$contains":
                if not isinstance(actual, list):
                    return fail
                for wanted in operand:
                    if not any(mismatch(wanted, item) is None for item in actual):
                        return f"{path}: expected an item matching {json.dumps(wanted)}, got {shown}"
            else:
                return f"{path}: unknown operator {op}"
        return None
    if isinstance(pattern, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {shown}"
        for key, item in pattern.items():
            found = mismatch(item, actual.get(key, _MISSING), f"{path}.{key}")
            if found:
                return found
        return None
    if _is_number(pattern) and _is_number(actual):
        return None if pattern == actual else f"{path}: expected {json.dumps(pattern)}, got {shown}"
    if type(pattern) is type(actual) and pattern == actual:
        return None
    return f"{path}: expected {json.dumps(pattern)}, got {shown}"


def wire(value: Any) -> Any:
    """An SDK value in the scenario's wire form: models by ``to_dict()``, lists item by item."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list):
        return [wire(item) for item in value]
    return value


def error_form(error: BaseException) -> Dict[str, Any]:
    """An SDK error in the scenario's wire form; anything else is a bug of the runner or SDK and is re-raised."""
    if not isinstance(error, AgentryError):
        raise error
    api = error if isinstance(error, APIError) else None
    return {
        "type": type(error).__name__,
        "status": api.status if api else None,
        "code": api.code if api else None,
        "message": str(error),
        "requestId": api.request_id if api else None,
        "details": [issue.to_dict() for issue in api.details] if api and api.details is not None else None,
        "retryAfter": api.retry_after if api else None,
    }


def keyword_arguments(method: Callable[..., Any], body: Mapping[str, Any]) -> Dict[str, Any]:
    """A JSON body (camelCase) as the method's keyword arguments; fields it has no argument for go in extra_body."""
    accepted = inspect.signature(method).parameters
    kwargs: Dict[str, Any] = {}
    extra: Dict[str, Any] = {}
    for key, value in body.items():
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
        if name not in accepted and f"{name}_" in accepted:
            # Python keywords take a trailing underscore: `from` is `from_`.
            name = f"{name}_"
        if name in accepted and name not in ("extra_headers", "extra_query", "extra_body", "timeout", "max_retries"):
            kwargs[name] = value
        else:
            extra[key] = value
    if extra:
        kwargs["extra_body" if "extra_body" in accepted else "extra_query"] = extra
    return kwargs


def build_client(
    spec: Mapping[str, Any], launcher: Mapping[str, Any], asynchronous: bool
) -> Union[Agentry, AsyncAgentry]:
    settings: Dict[str, Any] = {
        "api_key": launcher["keys"][spec["key"]] if "key" in spec else spec["apiKey"],
        "base_url": launcher["baseURL"],
    }
    if "maxRetries" in spec:
        settings["max_retries"] = spec["maxRetries"]
    if "maxRetryDelayMs" in spec:
        settings["max_retry_delay"] = spec["maxRetryDelayMs"] / 1000
    if "timeoutMs" in spec:
        settings["timeout"] = spec["timeoutMs"] / 1000
    return AsyncAgentry(**settings) if asynchronous else Agentry(**settings)


Outcome = Tuple[Any, Optional[BaseException]]


def own_key(args: Mapping[str, Any]) -> Dict[str, Any]:
    """The keyword argument of the caller's own ``Idempotency-Key``, when the step gives one."""
    return {"idempotency_key": args["idempotencyKey"]} if "idempotencyKey" in args else {}


def run_sync(client: Agentry, call: str, args: Mapping[str, Any]) -> Outcome:
    """Runs one scenario operation on the sync client: (result in wire form, error raised)."""
    agents = client.agents
    messages = client.agents.messages
    body = args.get("body", {})
    query = args.get("query", {})
    own = own_key(args)
    if call == "agents.messages.stream":
        events: List[Any] = []
        text = ""
        try:
            with messages.stream(args["agentId"], **keyword_arguments(messages.stream, body), **own) as stream:
                for event in stream:
                    events.append(event.to_dict())
                    if isinstance(event, MessageDeltaEvent):
                        text += event.data.text
        except AgentryError as error:
            return {"events": events, "text": text}, error
        return {"events": events, "text": text}, None
    if call == "users.export":
        exported: List[Any] = []
        try:
            with client.users.export(args["userId"]) as lines:
                for message in lines:
                    exported.append(message.to_dict())
        except AgentryError as error:
            return exported, error
        return exported, None
    history = client.agents.conversations
    deliveries = client.webhook_endpoints.deliveries
    endpoints = client.webhook_endpoints

    def listed(method: Callable[..., Any], *path: str) -> Any:
        return method(*path, **keyword_arguments(method, query))

    operations: Dict[str, Callable[[], Any]] = {
        "agents.create": lambda: agents.create(**keyword_arguments(agents.create, body), **own),
        "agents.get": lambda: agents.get(args["agentId"]),
        "agents.update": lambda: agents.update(args["agentId"], **keyword_arguments(agents.update, body), **own),
        "agents.delete": lambda: agents.delete(args["agentId"], **own),
        "agents.list": lambda: _first_page(agents.list(**keyword_arguments(agents.list, query))),
        "agents.listPages": lambda: [
            {"data": wire(page.data), "pagination": page.pagination.to_dict()}
            for page in agents.list(**keyword_arguments(agents.list, query)).iter_pages()
        ],
        "agents.listAll": lambda: list(agents.list(**keyword_arguments(agents.list, query))),
        "agents.messages.send": lambda: messages.send(args["agentId"], **keyword_arguments(messages.send, body), **own),
        "agents.messages.streamText": lambda: messages.stream(
            args["agentId"], **keyword_arguments(messages.stream, body), **own
        ).text(),
        "agents.messages.streamFinalMessage": lambda: messages.stream(
            args["agentId"], **keyword_arguments(messages.stream, body), **own
        ).final_message(),
        "apiKeys.create": lambda: client.api_keys.create(**keyword_arguments(client.api_keys.create, body), **own),
        "apiKeys.list": lambda: client.api_keys.list(),
        "apiKeys.revoke": lambda: client.api_keys.revoke(args["keyId"], **own),
        "agents.messages.list": lambda: _first_page(listed(messages.list, args["agentId"])),
        "agents.messages.listAll": lambda: list(listed(messages.list, args["agentId"])),
        "agents.messages.get": lambda: messages.get(args["agentId"], args["messageId"]),
        "agents.messages.sendBackground": lambda: messages.send_background(
            args["agentId"], **keyword_arguments(messages.send_background, body), **own
        ),
        "agents.messages.getBackground": lambda: messages.get_background(args["agentId"], args["messageId"]),
        "agents.messages.waitForBackground": lambda: messages.wait_for_background(
            args["agentId"], args["messageId"], poll_interval=0.05, max_wait=30
        ),
        "agents.conversations.list": lambda: _first_page(listed(history.list, args["agentId"])),
        "agents.conversations.listAll": lambda: list(listed(history.list, args["agentId"])),
        "agents.conversations.delete": lambda: history.delete(args["agentId"], args["conversationId"], **own),
        "users.erase": lambda: client.users.erase(args["userId"], **own),
        "usage.get": lambda: listed(client.usage.get),
        "agents.usage.get": lambda: listed(agents.usage.get, args["agentId"]),
        "agents.importCharacter": lambda: (
            agents.import_character(body, dry_run=True, **own)
            if args.get("dryRun")
            else agents.import_character(body, **own)
        ),
        "agents.exportCharacter": lambda: agents.export_character(args["agentId"]),
        "webhookEndpoints.create": lambda: endpoints.create(**keyword_arguments(endpoints.create, body), **own),
        "webhookEndpoints.list": lambda: endpoints.list(),
        "webhookEndpoints.get": lambda: endpoints.get(args["webhookId"]),
        "webhookEndpoints.update": lambda: endpoints.update(
            args["webhookId"], **keyword_arguments(endpoints.update, body), **own
        ),
        "webhookEndpoints.delete": lambda: endpoints.delete(args["webhookId"], **own),
        "webhookEndpoints.rotateSecret": lambda: endpoints.rotate_secret(args["webhookId"], **own),
        "webhookEndpoints.sendTestEvent": lambda: endpoints.send_test_event(args["webhookId"], **own),
        "webhookEndpoints.deliveries.list": lambda: _first_page(listed(deliveries.list, args["webhookId"])),
        "webhookEndpoints.deliveries.listAll": lambda: list(listed(deliveries.list, args["webhookId"])),
        "webhookEndpoints.deliveries.redeliver": lambda: deliveries.redeliver(args["webhookId"], args["deliveryId"], **own),
        "plugins.list": lambda: client.plugins.list(),
        "agents.secrets.set": lambda: agents.secrets.set(args["agentId"], args["name"], value=body["value"], **own),
        "agents.secrets.list": lambda: agents.secrets.list(args["agentId"]),
        "agents.secrets.delete": lambda: agents.secrets.delete(args["agentId"], args["name"], **own),
    }
    if call not in operations:
        raise AssertionError(f"unknown operation {call}")
    try:
        return wire(operations[call]()), None
    except AgentryError as error:
        return None, error


def _first_page(page: Any) -> Dict[str, Any]:
    return {"data": wire(page.data), "pagination": page.pagination.to_dict(), "hasNextPage": page.has_next_page()}


async def run_async(client: AsyncAgentry, call: str, args: Mapping[str, Any]) -> Outcome:
    """Runs one scenario operation on the async client: (result in wire form, error raised)."""
    agents = client.agents
    messages = client.agents.messages
    body = args.get("body", {})
    query = args.get("query", {})
    own = own_key(args)
    if call == "agents.messages.stream":
        events: List[Any] = []
        text = ""
        try:
            async with messages.stream(args["agentId"], **keyword_arguments(messages.stream, body), **own) as stream:
                async for event in stream:
                    events.append(event.to_dict())
                    if isinstance(event, MessageDeltaEvent):
                        text += event.data.text
        except AgentryError as error:
            return {"events": events, "text": text}, error
        return {"events": events, "text": text}, None

    async def list_pages() -> List[Dict[str, Any]]:
        first = await agents.list(**keyword_arguments(agents.list, query))
        return [
            {"data": wire(page.data), "pagination": page.pagination.to_dict()} async for page in first.iter_pages()
        ]

    async def list_all() -> List[Any]:
        return [agent async for agent in agents.list(**keyword_arguments(agents.list, query))]

    async def first_page() -> Dict[str, Any]:
        return _first_page(await agents.list(**keyword_arguments(agents.list, query)))

    if call == "users.export":
        exported: List[Any] = []
        try:
            async with client.users.export(args["userId"]) as lines:
                async for message in lines:
                    exported.append(message.to_dict())
        except AgentryError as error:
            return exported, error
        return exported, None
    history = client.agents.conversations
    deliveries = client.webhook_endpoints.deliveries
    endpoints = client.webhook_endpoints

    def listed(method: Callable[..., Any], *path: str) -> Any:
        return method(*path, **keyword_arguments(method, query))

    async def page_of(pager: Any) -> Dict[str, Any]:
        return _first_page(await pager)

    async def every(pager: Any) -> List[Any]:
        return [item async for item in pager]

    async def import_character() -> Any:
        if args.get("dryRun"):
            return await agents.import_character(body, dry_run=True, **own)
        return await agents.import_character(body, **own)

    operations: Dict[str, Callable[[], Awaitable[Any]]] = {
        "agents.create": lambda: agents.create(**keyword_arguments(agents.create, body), **own),
        "agents.get": lambda: agents.get(args["agentId"]),
        "agents.update": lambda: agents.update(args["agentId"], **keyword_arguments(agents.update, body), **own),
        "agents.delete": lambda: agents.delete(args["agentId"], **own),
        "agents.list": first_page,
        "agents.listPages": list_pages,
        "agents.listAll": list_all,
        "agents.messages.send": lambda: messages.send(args["agentId"], **keyword_arguments(messages.send, body), **own),
        "agents.messages.streamText": lambda: messages.stream(
            args["agentId"], **keyword_arguments(messages.stream, body), **own
        ).text(),
        "agents.messages.streamFinalMessage": lambda: messages.stream(
            args["agentId"], **keyword_arguments(messages.stream, body), **own
        ).final_message(),
        "apiKeys.create": lambda: client.api_keys.create(**keyword_arguments(client.api_keys.create, body), **own),
        "apiKeys.list": lambda: client.api_keys.list(),
        "apiKeys.revoke": lambda: client.api_keys.revoke(args["keyId"], **own),
        "agents.messages.list": lambda: page_of(listed(messages.list, args["agentId"])),
        "agents.messages.listAll": lambda: every(listed(messages.list, args["agentId"])),
        "agents.messages.get": lambda: messages.get(args["agentId"], args["messageId"]),
        "agents.messages.sendBackground": lambda: messages.send_background(
            args["agentId"], **keyword_arguments(messages.send_background, body), **own
        ),
        "agents.messages.getBackground": lambda: messages.get_background(args["agentId"], args["messageId"]),
        "agents.messages.waitForBackground": lambda: messages.wait_for_background(
            args["agentId"], args["messageId"], poll_interval=0.05, max_wait=30
        ),
        "agents.conversations.list": lambda: page_of(listed(history.list, args["agentId"])),
        "agents.conversations.listAll": lambda: every(listed(history.list, args["agentId"])),
        "agents.conversations.delete": lambda: history.delete(args["agentId"], args["conversationId"], **own),
        "users.erase": lambda: client.users.erase(args["userId"], **own),
        "usage.get": lambda: listed(client.usage.get),
        "agents.usage.get": lambda: listed(agents.usage.get, args["agentId"]),
        "agents.importCharacter": import_character,
        "agents.exportCharacter": lambda: agents.export_character(args["agentId"]),
        "webhookEndpoints.create": lambda: endpoints.create(**keyword_arguments(endpoints.create, body), **own),
        "webhookEndpoints.list": lambda: endpoints.list(),
        "webhookEndpoints.get": lambda: endpoints.get(args["webhookId"]),
        "webhookEndpoints.update": lambda: endpoints.update(
            args["webhookId"], **keyword_arguments(endpoints.update, body), **own
        ),
        "webhookEndpoints.delete": lambda: endpoints.delete(args["webhookId"], **own),
        "webhookEndpoints.rotateSecret": lambda: endpoints.rotate_secret(args["webhookId"], **own),
        "webhookEndpoints.sendTestEvent": lambda: endpoints.send_test_event(args["webhookId"], **own),
        "webhookEndpoints.deliveries.list": lambda: page_of(listed(deliveries.list, args["webhookId"])),
        "webhookEndpoints.deliveries.listAll": lambda: every(listed(deliveries.list, args["webhookId"])),
        "webhookEndpoints.deliveries.redeliver": lambda: deliveries.redeliver(args["webhookId"], args["deliveryId"], **own),
        "plugins.list": lambda: client.plugins.list(),
        "agents.secrets.set": lambda: agents.secrets.set(args["agentId"], args["name"], value=body["value"], **own),
        "agents.secrets.list": lambda: agents.secrets.list(args["agentId"]),
        "agents.secrets.delete": lambda: agents.secrets.delete(args["agentId"], args["name"], **own),
    }
    if call not in operations:
        raise AssertionError(f"unknown operation {call}")
    try:
        return wire(await operations[call]()), None
    except AgentryError as error:
        return None, error


def _control_json(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    if data is not None:
        request.add_header("content-type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


@dataclass
class ScenarioRun:
    """Runs the steps in order; ``variables`` starts as ``{"launcher": info}`` and gains each step's ``save``."""

    scenario: Dict[str, Any]
    launcher: Dict[str, Any]
    asynchronous: bool
    variables: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.variables["launcher"] = self.launcher

    def _requests(self, after: Optional[int] = None) -> Dict[str, Any]:
        """The launcher's request counts; with ``after``, also its log of the requests after the ``after``-th."""
        query = "" if after is None else f"?after={after}"
        counts: Dict[str, Any] = _control_json(f"{self.launcher['controlURL']}/requests{query}")
        return counts

    def step(self, step: Mapping[str, Any]) -> None:
        """Runs one step; raises AssertionError naming what did not match."""
        if "control" in step:
            try:
                _control_json(
                    f"{self.launcher['controlURL']}/{step['control']}", resolve(step.get("body", {}), self.variables)
                )
            except urllib.error.HTTPError as error:
                raise AssertionError(f"control {step['control']}: {error.code} {error.read()!r}") from error
            return
        spec = resolve(self.scenario["clients"][step.get("client", "default")], self.variables)
        expect = resolve(step.get("expect", {}), self.variables)
        args = resolve(step.get("args", {}), self.variables)
        counting = ("requests" in expect or "requestLog" in expect) and "key" in spec
        before = self._requests() if counting else None

        client = build_client(spec, self.launcher, self.asynchronous)
        if isinstance(client, AsyncAgentry):
            async_client = client

            async def run() -> Outcome:
                async with async_client:
                    return await run_async(async_client, step["call"], args)

            outcome = asyncio.run(run())
        else:
            with client:
                outcome = run_sync(client, step["call"], args)
        result = None if outcome[0] is None else json.loads(json.dumps(outcome[0]))
        raised = outcome[1]
        error_wire = None if raised is None else error_form(raised)

        problems: List[str] = []
        if "error" not in expect and error_wire is not None:
            problems.append(f"unexpected error: {json.dumps(error_wire)}")
        if "error" in expect:
            if error_wire is None:
                problems.append("error: expected an error, the call succeeded")
            else:
                problems.extend(filter(None, [mismatch(expect["error"], error_wire, "error")]))
        if "result" in expect:
            actual = _MISSING if result is None and raised is not None else result
            problems.extend(filter(None, [mismatch(expect["result"], actual, "result")]))
        if "rateLimit" in expect:
            state = client.last_rate_limit
            state_wire = (
                None if state is None else {"limit": state.limit, "remaining": state.remaining, "reset": state.reset}
            )
            problems.extend(filter(None, [mismatch(expect["rateLimit"], state_wire, "rateLimit")]))
        if counting and before is not None:
            key = spec["key"]
            after = self._requests(before["total"])
            made = int(after["byKey"].get(key, 0)) - int(before["byKey"].get(key, 0))
            if "requests" in expect and made != expect["requests"]:
                problems.append(f"requests: expected {expect['requests']}, the server saw {made}")
            if "requestLog" in expect:
                log = [entry for entry in after.get("log", []) if entry["key"] == key]
                problems.extend(filter(None, [mismatch(expect["requestLog"], log, "requestLog")]))
        if problems:
            raise AssertionError(f'step "{step["name"]}":\n  ' + "\n  ".join(problems))
        if "save" in step:
            self.variables[step["save"]] = result


