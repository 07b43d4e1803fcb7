"""The API's models (``from agentry.types import Agent, Reply``), generated from its OpenAPI document."""

from ._generated.models import *  # noqa: F403
from ._generated.models import __all__ as __all__  # noqa: F401
