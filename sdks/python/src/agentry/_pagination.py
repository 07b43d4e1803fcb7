"""Pages of a listing, iterable item by item across pages: numbered pages (agents) and cursor-paged ones (history,
the delivery log)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import (
    Any,
    Tuple,
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
from ._generated.models import CursorPagination, Pagination
from ._types import NotGiven, RequestOptions

T = TypeVar("T")


@dataclass(frozen=True)
class PageSpec:
    """Where a listing keeps its pages (``x-pagination`` of the API document)."""

    page_parameter: str
    items_field: str
    page_info_field: str
    has_more_field: str


def _pages(first: Any) -> Iterator[Any]:
    """A page, then each page after it, fetched as the loop asks (numbered and cursor pages alike)."""
    page = first
    yield page
    while page.has_next_page():
        page = page.next_page()
        yield page


def _items(pages: Iterator[Any]) -> Iterator[Any]:
    for page in pages:
        yield from page.data


async def _async_pages(first: Any) -> AsyncIterator[Any]:
    """As ``_pages``, for async pages."""
    page = first
    yield page
    while page.has_next_page():
        page = await page.next_page()
        yield page


async def _async_items(pages: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for page in pages:
        for item in page.data:
            yield item


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
        return _pages(self)

    def __iter__(self) -> Iterator[T]:
        """Every item from this page to the end of the listing."""
        return _items(self.iter_pages())

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

    def iter_pages(self) -> AsyncIterator["AsyncPage[T]"]:
        """Every page from this one to the last, fetched one at a time as the loop asks for them."""
        return _async_pages(self)

    def __aiter__(self) -> AsyncIterator[T]:
        """Every item from this page to the end of the listing."""
        return _async_items(self.iter_pages())

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


@dataclass(frozen=True)
class CursorSpec:
    """Where a cursor-paged listing keeps its pages (``x-cursor-pagination`` of the API document)."""

    before_parameter: str
    after_parameter: str
    order_parameter: Optional[str]
    items_field: str
    page_info_field: str
    has_more_field: str
    cursor_field: str


def _given(value: Any) -> bool:
    return value is not None and not isinstance(value, NotGiven)


def _following(
    query: Mapping[str, Any], spec: CursorSpec, items: List[Any]
) -> Tuple[Optional[str], Optional[Mapping[str, Any]]]:
    """The cursor and the query of the page after these items (``None`` after an empty page).

    Paging goes on the way the query went: toward older items (``before`` given, or no cursor and newest first,
    the default), the next page is ``before`` the page's oldest item; toward newer ones (``after`` given, or no
    cursor and ``order="asc"``), ``after`` its newest. The rest of the query is kept.
    """
    before, after = spec.before_parameter, spec.after_parameter
    ascending = spec.order_parameter is not None and query.get(spec.order_parameter) == "asc"
    older = _given(query.get(before)) or (not _given(query.get(after)) and not ascending)
    if not items:
        return None, None
    # Items come in the list's order: newest first unless ascending.
    item = items[0] if older == ascending else items[-1]
    cursor = item.get(spec.cursor_field) if isinstance(item, dict) else None
    if not isinstance(cursor, str) or cursor == "":
        return None, None
    following = {k: v for k, v in query.items() if k not in (before, after)}
    following[before if older else after] = cursor
    return cursor, following


class SyncCursorPage(Generic[T]):
    """One page of a cursor-paged listing (the history lists, a webhook endpoint's delivery log).

    Iterating it walks every item from this page to the end of the listing, in the listing's order, fetching the
    next pages as it goes: each is ``before`` the last item (newest first, the default) or ``after`` it (with
    ``order="asc"``), so items added meanwhile do not shift the pages. A first page asked for with ``before`` or
    ``after`` goes on that way: toward older items, or newer ones.
    """

    data: List[T]
    """The items of this page."""
    pagination: CursorPagination
    """The page size and whether another page follows."""

    def __init__(
        self,
        data: List[T],
        pagination: CursorPagination,
        has_more: bool,
        next_cursor: Optional[str],
        fetch_next: Callable[[], "SyncCursorPage[T]"],
    ) -> None:
        self.data = data
        self.pagination = pagination
        self._has_more = has_more
        self.next_cursor = next_cursor
        """The cursor of the next page (usually the last item's id), or ``None`` on an empty page."""
        self._fetch_next = fetch_next

    def has_next_page(self) -> bool:
        """Whether another page follows this one."""
        return self._has_more and self.next_cursor is not None

    def next_page(self) -> "SyncCursorPage[T]":
        """Fetches the next page, with the same query; raises ``AgentryError`` when there is none."""
        if not self.has_next_page():
            raise AgentryError("There is no next page.")
        return self._fetch_next()

    def iter_pages(self) -> Iterator["SyncCursorPage[T]"]:
        """Every page from this one to the last, fetched one at a time as the loop asks for them."""
        return _pages(self)

    def __iter__(self) -> Iterator[T]:
        """Every item from this page to the end of the listing."""
        return _items(self.iter_pages())

    def __repr__(self) -> str:
        return f"SyncCursorPage(data={self.data!r}, pagination={self.pagination!r})"


class AsyncCursorPage(Generic[T]):
    """One page of a cursor-paged listing; ``async for`` walks every item from here to the end (see
    ``SyncCursorPage``)."""

    data: List[T]
    """The items of this page."""
    pagination: CursorPagination
    """The page size and whether another page follows."""

    def __init__(
        self,
        data: List[T],
        pagination: CursorPagination,
        has_more: bool,
        next_cursor: Optional[str],
        fetch_next: Callable[[], Awaitable["AsyncCursorPage[T]"]],
    ) -> None:
        self.data = data
        self.pagination = pagination
        self._has_more = has_more
        self.next_cursor = next_cursor
        """The cursor of the next page (usually the last item's id), or ``None`` on an empty page."""
        self._fetch_next = fetch_next

    def has_next_page(self) -> bool:
        """Whether another page follows this one."""
        return self._has_more and self.next_cursor is not None

    async def next_page(self) -> "AsyncCursorPage[T]":
        """Fetches the next page, with the same query; raises ``AgentryError`` when there is none."""
        if not self.has_next_page():
            raise AgentryError("There is no next page.")
        return await self._fetch_next()

    def iter_pages(self) -> AsyncIterator["AsyncCursorPage[T]"]:
        """Every page from this one to the last, fetched one at a time as the loop asks for them."""
        return _async_pages(self)

    def __aiter__(self) -> AsyncIterator[T]:
        """Every item from this page to the end of the listing."""
        return _async_items(self.iter_pages())

    def __repr__(self) -> str:
        return f"AsyncCursorPage(data={self.data!r}, pagination={self.pagination!r})"


class AsyncCursorPager(Generic[T]):
    """What an async cursor-paged ``list()`` returns: ``await`` it for the first page, or ``async for`` every item
    of every page. The request is sent when you do either.
    """

    def __init__(self, fetch_first: Callable[[], Awaitable[AsyncCursorPage[T]]]) -> None:
        self._fetch_first = fetch_first

    def __await__(self) -> Generator[Any, None, AsyncCursorPage[T]]:
        return self._fetch_first().__await__()

    async def __aiter__(self) -> AsyncIterator[T]:
        page = await self._fetch_first()
        async for item in page:
            yield item


def fetch_sync_cursor_page(
    transport: SyncTransport,
    spec: RequestSpec,
    options: RequestOptions,
    cursor_spec: CursorSpec,
    item: Callable[[Any], T],
) -> SyncCursorPage[T]:
    """Fetches the page of a cursor-paged listing that ``spec``'s query asks for."""
    envelope = transport.request(spec, options)
    items = envelope[cursor_spec.items_field]
    info = envelope[cursor_spec.page_info_field]
    cursor, following = _following(spec.query or {}, cursor_spec, items)
    return SyncCursorPage(
        [item(value) for value in items],
        CursorPagination.from_dict(info),
        info.get(cursor_spec.has_more_field) is True,
        cursor,
        lambda: fetch_sync_cursor_page(transport, replace(spec, query=following), options, cursor_spec, item),
    )


async def fetch_async_cursor_page(
    transport: AsyncTransport,
    spec: RequestSpec,
    options: RequestOptions,
    cursor_spec: CursorSpec,
    item: Callable[[Any], T],
) -> AsyncCursorPage[T]:
    """Fetches the page of a cursor-paged listing that ``spec``'s query asks for."""
    envelope = await transport.request(spec, options)
    items = envelope[cursor_spec.items_field]
    info = envelope[cursor_spec.page_info_field]
    cursor, following = _following(spec.query or {}, cursor_spec, items)
    return AsyncCursorPage(
        [item(value) for value in items],
        CursorPagination.from_dict(info),
        info.get(cursor_spec.has_more_field) is True,
        cursor,
        lambda: fetch_async_cursor_page(transport, replace(spec, query=following), options, cursor_spec, item),
    )
