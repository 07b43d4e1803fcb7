"""Turning Python call arguments into the request's path, query and JSON body."""

from __future__ import annotations

import json
import os
from datetime import date, datetime
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union
from urllib.parse import quote

from ._types import NotGiven


def path_segment(name: str, value: str) -> str:
    """An id as one URL path segment; an empty one is refused here rather than turned into another route."""
    from ._exceptions import AgentryError

    if not isinstance(value, str) or value == "":
        raise AgentryError(f"{name} must be a non-empty string, got {value!r}.")
    return quote(value, safe="")


def json_object_argument(name: str, value: Any) -> Mapping[str, Any]:
    """A JSON object argument given as a mapping, or as the path (``str`` or ``os.PathLike``) of a file holding one.

    The file is read as UTF-8 and parsed; a file that cannot be read, is not JSON, or holds something other than an
    object is refused here, before anything is sent.
    """
    from ._exceptions import AgentryError

    if isinstance(value, Mapping):
        return value
    if not isinstance(value, (str, os.PathLike)):
        raise AgentryError(f"{name} must be a mapping or the path of a JSON file, got {type(value).__name__}.")
    path = os.fspath(value)
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentryError(f"Cannot read {name} from {path}: {exc}") from exc
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise AgentryError(f"{name}: {path} is not JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise AgentryError(f"{name}: {path} does not hold a JSON object.")
    return parsed


def to_json(value: Any) -> Any:
    """A JSON-ready copy of ``value``: models by their ``to_dict()``, datetimes in ISO 8601, NOT_GIVEN dropped."""
    if isinstance(value, NotGiven):
        raise TypeError("NOT_GIVEN cannot be sent")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_json(to_dict())
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): to_json(item) for key, item in value.items() if not isinstance(item, NotGiven)}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    raise TypeError(f"cannot send a value of type {type(value).__name__} as JSON")


def build_body(fields: Mapping[str, Any], extra: Optional[Mapping[str, object]]) -> Dict[str, Any]:
    """The JSON body of the fields given (``NOT_GIVEN`` ones left out), with ``extra`` merged over them."""
    body: Dict[str, Any] = {name: to_json(value) for name, value in fields.items() if not isinstance(value, NotGiven)}
    if extra:
        body.update({name: to_json(value) for name, value in extra.items()})
    return body


QueryValue = Union[str, int, float, bool]


def build_query(
    params: Mapping[str, Any], extra: Optional[Mapping[str, object]]
) -> List[Tuple[str, Union[str, int, float, bool, None]]]:
    """Query parameters of the values given; ``None`` and ``NOT_GIVEN`` are left out.

    A list is sent as one comma-separated value (``group_by=["agentId", "model"]`` → ``groupBy=agentId,model``),
    a datetime in ISO 8601.
    """
    merged: Dict[str, Any] = {name: value for name, value in params.items()}
    if extra:
        merged.update(extra)
    pairs: List[Tuple[str, Union[str, int, float, bool, None]]] = []
    for name, value in merged.items():
        if value is None or isinstance(value, NotGiven):
            continue
        if isinstance(value, (list, tuple)):
            pairs.append((name, ",".join(_query_text(item) for item in value)))
        else:
            pairs.append((name, _query_text(value)))
    return pairs


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)
