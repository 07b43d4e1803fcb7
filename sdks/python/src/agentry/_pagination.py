"""Pages of a listing, iterable item by item across pages."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Generic,
    Iterator,
    List,
    Mapping,
    Optional,
    TypeVar,
)

from ._base_client import AsyncTransport, RequestSpec, SyncTransport
from ._exceptions import AgentryError
from ._generated.models import Pagination
from ._types import RequestOptions

T = TypeVar("T")


@dataclass(frozen=True)
class PageSpec:
    """Where a listing keeps its pages (``x-pagination`` of the API document)."""

    page_parameter: str
    items_field: str
    page_info_field: str
    has_more_field: str


def _next_number(spec: PageSpec, info: Mapping[str, Any], requested: Optional[int]) -> int:
    current = info.get(spec.page_parameter)
    if isinstance(current, int) and not isinstance(current, bool):
        return current + 1
    return (requested or 1) + 1


class SyncPage(Generic[T]):
    """One page of a listing.

    Iterating it walks every item from this page to the end of the listing, fetching the next pages as it goes.
    Pages are numbered: items created or deleted while you iterate can shift between pages, so an item may be
    seen twice or not at all.
    """

    data: List[T]
    """The items of this page."""
    pagination: Pagination
    """Where this page sits in the listing."""

    def __init__(
        self,
        data: List[T],
        pagination: Pagination,
        info: Mapping[str, Any],
        number: int,
        spec: PageSpec,
        fetch: Callable[[int], "SyncPage[T]"],
    ) -> None:
        self.data = data
        self.pagination = pagination
        self._info = info
        self._number = number
        self._spec = spec
        self._fetch = fetch

    def has_next_page(self) -> bool:
        """Whether another page follows this one."""
        return bool(self._info.get(self._spec.has_more_field)) and len(self.data) > 0

    def next_page(self) -> "SyncPage[T]":
        """Fetches the next page, with the same query; raises ``AgentryError`` when there is none."""
        if not self.has_next_page():
            raise AgentryError("There is no next page.")
        return self._fetch(_next_number(self._spec, self._info, self._number))

    def iter_pages(self) -> Iterator["SyncPage[T]"]:
        """Every page from this one to the last, fetched one at a time as the loop asks for them."""
        page: SyncPage[T] = self
        yield page
        while page.has_next_page():
            page = page.next_page()
            yield page

    def __iter__(self) -> Iterator[T]:
        """Every item from this page to the end of the listing."""
        for page in self.iter_pages():
            yield from page.data

    def __repr__(self) -> str:
        return f"SyncPage(data={self.data!r}, pagination={self.pagination!r})"


class AsyncPage(Generic[T]):
    """One page of a listing; ``async for`` walks every item from here to the end (see ``SyncPage``)."""

    data: List[T]
    """The items of this page."""
    pagination: Pagination
    """Where this page sits in the listing."""

    def __init__(
        self,
        data: List[T],
        pagination: Pagination,
        info: Mapping[str, Any],
        number: int,
        spec: PageSpec,
        fetch: Callable[[int], Awaitable["AsyncPage[T]"]],
    ) -> None:
        self.data = data
        self.pagination = pagination
        self._info = info
        self._number = number
        self._spec = spec
        self._fetch = fetch

    def has_next_page(self) -> bool:
        """Whether another page follows this one."""
        return bool(self._info.get(self._spec.has_more_field)) and len(self.data) > 0

    async def next_page(self) -> "AsyncPage[T]":
        """Fetches the next page, with the same query; raises ``AgentryError`` when there is none."""
        if not self.has_next_page():
            raise AgentryError("There is no next page.")
        return await self._fetch(_next_number(self._spec, self._info, self._number))

    async def iter_pages(self) -> AsyncIterator["AsyncPage[T]"]:
        """Every page from this one to the last, fetched one at a time as the loop asks for them."""
        page: AsyncPage[T] = self
        yield page
        while page.has_next_page():
            page = await page.next_page()
            yield page

    async def __aiter__(self) -> AsyncIterator[T]:
        """Every item from this page to the end of the listing."""
        async for page in self.iter_pages():
            for item in page.data:
                yield item

    def __repr__(self) -> str:
        return f"AsyncPage(data={self.data!r}, pagination={self.pagination!r})"


class AsyncPager(Generic[T]):
    """What an async ``list()`` returns: ``await`` it for the first page, or ``async for`` every item of every page.

    The request is sent when you do either.
    """

    def __init__(self, fetch_first: Callable[[], Awaitable[AsyncPage[T]]]) -> None:
        self._fetch_first = fetch_first

    def __await__(self) -> Generator[Any, None, AsyncPage[T]]:
        return self._fetch_first().__await__()

    async def __aiter__(self) -> AsyncIterator[T]:
        page = await self._fetch_first()
        async for item in page:
            yield item


def _page_query(spec: Mapping[str, Any], page_spec: PageSpec, number: Optional[int]) -> Mapping[str, Any]:
    if number is None:
        return spec
    return {**spec, page_spec.page_parameter: number}


def _requested(query: Mapping[str, Any], page_spec: PageSpec) -> Optional[int]:
    value = query.get(page_spec.page_parameter)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def fetch_sync_page(
    transport: SyncTransport,
    spec: RequestSpec,
    options: RequestOptions,
    page_spec: PageSpec,
    item: Callable[[Any], T],
    number: Optional[int] = None,
) -> SyncPage[T]:
    """Fetches one page of a listing (``number``, else the page the query asks for)."""
    query = _page_query(spec.query or {}, page_spec, number)
    envelope = transport.request(replace(spec, query=query), options)
    info = envelope[page_spec.page_info_field]
    return SyncPage(
        [item(value) for value in envelope[page_spec.items_field]],
        Pagination.from_dict(info),
        info,
        number if number is not None else _requested(query, page_spec) or 1,
        page_spec,
        lambda following: fetch_sync_page(transport, spec, options, page_spec, item, following),
    )


async def fetch_async_page(
    transport: AsyncTransport,
    spec: RequestSpec,
    options: RequestOptions,
    page_spec: PageSpec,
    item: Callable[[Any], T],
    number: Optional[int] = None,
) -> AsyncPage[T]:
    """Fetches one page of a listing (``number``, else the page the query asks for)."""
    query = _page_query(spec.query or {}, page_spec, number)
    envelope = await transport.request(replace(spec, query=query), options)
    info = envelope[page_spec.page_info_field]
    return AsyncPage(
        [item(value) for value in envelope[page_spec.items_field]],
        Pagination.from_dict(info),
        info,
        number if number is not None else _requested(query, page_spec) or 1,
        page_spec,
        lambda following: fetch_async_page(transport, spec, options, page_spec, item, following),
    )
