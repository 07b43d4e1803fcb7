"""The official Python client for the Agentry Agent Management API.

::

    from agentry import Agentry

    client = Agentry()  # AGENTRY_API_KEY, AGENTRY_BASE_URL
    agent = client.agents.create(name="Ada", bio=["Counts things"])
    for event in client.agents.messages.stream(agent.id, text="Hello!"):
        ...

Webhook deliveries are verified with ``agentry.webhooks`` (no client or API key needed).
"""

from ._client import (
    DEFAULT_BASE_URL,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_DELAY,
    DEFAULT_TIMEOUT,
    Agentry,
    AsyncAgentry,
)
from ._exceptions import (
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
    WebhookVerificationError,
)
from ._ndjson import AsyncNDJSONStream, NDJSONStream
from ._pagination import AsyncCursorPage, AsyncCursorPager, AsyncPage, AsyncPager, SyncCursorPage, SyncPage
from ._streaming import AsyncMessageStream, MessageStream
from ._types import NOT_GIVEN, NotGiven, RateLimitInfo
from ._version import VERSION
from . import types, webhooks

__version__ = VERSION

__all__ = [
    "Agentry",
    "AsyncAgentry",
    "AgentryError",
    "APIError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "InternalServerError",
    "APIConnectionError",
    "APITimeoutError",
    "APIUserAbortError",
    "WebhookVerificationError",
    "SyncPage",
    "AsyncPage",
    "AsyncPager",
    "SyncCursorPage",
    "AsyncCursorPage",
    "AsyncCursorPager",
    "NDJSONStream",
    "AsyncNDJSONStream",
    "MessageStream",
    "AsyncMessageStream",
    "RateLimitInfo",
    "NOT_GIVEN",
    "NotGiven",
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_RETRY_DELAY",
    "__version__",
    "types",
    "webhooks",
]
