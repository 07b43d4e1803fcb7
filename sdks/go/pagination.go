package agentry

import (
	"context"
	"errors"
	"iter"
)

// ErrNoNextPage is returned by [Page.NextPage] on the last page.
var ErrNoNextPage = errors.New("agentry: there is no next page")

// Page is one page of a listing. Pages are numbered: items created or deleted while you page through a listing
// can shift between pages, so an item may be seen twice or not at all.
type Page[T any] struct {
	// Data holds the items of this page.
	Data []T `json:"data"`
	// Pagination says where this page sits in the listing.
	Pagination Pagination `json:"pagination"`

	hasMore   bool
	fetchNext func(ctx context.Context) (*Page[T], error)
}

// HasNextPage reports whether another page follows this one.
func (p *Page[T]) HasNextPage() bool {
	return p.hasMore && len(p.Data) > 0 && p.fetchNext != nil
}

// NextPage fetches the page after this one, with the same parameters and options; ErrNoNextPage on the last.
func (p *Page[T]) NextPage(ctx context.Context) (*Page[T], error) {
	if !p.HasNextPage() {
		return nil, ErrNoNextPage
	}
	return p.fetchNext(ctx)
}

// All iterates over every item from this page to the end of the listing, fetching the next pages as the loop
// asks for them. A failure to fetch a page is yielded once, as the last pair.
func (p *Page[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return walk[T](ctx, p)
}

func (p *Page[T]) items() []T { return p.Data }

func (p *Page[T]) next(ctx context.Context) (pageOf[T], error) { return p.NextPage(ctx) }

// paginate iterates over every item of a listing from its first page.
func paginate[T any](ctx context.Context, first func(ctx context.Context) (*Page[T], error)) iter.Seq2[T, error] {
	return walkFrom(ctx, func(ctx context.Context) (pageOf[T], error) { return first(ctx) })
}

// pageOf is what a walk through a listing needs of a page, numbered or cursor-paged.
type pageOf[T any] interface {
	items() []T
	HasNextPage() bool
	next(ctx context.Context) (pageOf[T], error)
}

// walk yields every item from the first page to the end of the listing, fetching each next page as the loop asks
// for it; a failure to fetch one is yielded once, as the last pair.
func walk[T any](ctx context.Context, first pageOf[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for page := first; ; {
			for _, item := range page.items() {
				if !yield(item, nil) {
					return
				}
			}
			if !page.HasNextPage() {
				return
			}
			next, err := page.next(ctx)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			page = next
		}
	}
}

// walkFrom walks a listing from the page `first` fetches; its failure is the only pair yielded.
func walkFrom[T any](ctx context.Context, first func(ctx context.Context) (pageOf[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		page, err := first(ctx)
		if err != nil {
			var zero T
			yield(zero, err)
			return
		}
		walk(ctx, page)(yield)
	}
}

// CursorPage is one page of a cursor-paged listing (the history lists, a webhook endpoint's delivery log). The
// next page is the one before this page's last item (newest first, the default) or after it (oldest first), so
// items added while you page through do not shift the pages. A first page asked for with Before or After goes on
// that way: toward older items, or newer ones.
type CursorPage[T any] struct {
	// Data holds the items of this page.
	Data []T `json:"data"`
	// Pagination holds the page size and whether another page follows.
	Pagination CursorPagination `json:"pagination"`
	// NextCursor is the cursor of the next page (usually the last item's id), "" on an empty page.
	NextCursor string `json:"-"`

	hasMore   bool
	fetchNext func(ctx context.Context) (*CursorPage[T], error)
}

// HasNextPage reports whether another page follows this one.
func (p *CursorPage[T]) HasNextPage() bool {
	return p.hasMore && p.NextCursor != "" && p.fetchNext != nil
}

// NextPage fetches the page after this one, with the same parameters and options; ErrNoNextPage on the last.
func (p *CursorPage[T]) NextPage(ctx context.Context) (*CursorPage[T], error) {
	if !p.HasNextPage() {
		return nil, ErrNoNextPage
	}
	return p.fetchNext(ctx)
}

// All iterates over every item from this page to the end of the listing, fetching the next pages as the loop
// asks for them. A failure to fetch a page is yielded once, as the last pair.
func (p *CursorPage[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return walk[T](ctx, p)
}

func (p *CursorPage[T]) items() []T { return p.Data }

func (p *CursorPage[T]) next(ctx context.Context) (pageOf[T], error) { return p.NextPage(ctx) }

// paginateCursor iterates over every item of a cursor-paged listing from its first page.
func paginateCursor[T any](ctx context.Context, first func(ctx context.Context) (*CursorPage[T], error)) iter.Seq2[T, error] {
	return walkFrom(ctx, func(ctx context.Context) (pageOf[T], error) { return first(ctx) })
}

// cursorStep tells how the page after n items goes on, the way the query went: toward older items (before
// given, or no cursor and newest first, the default), before the page's oldest item; toward newer ones (after
// given, or no cursor and ascending), after its newest. It returns the index of that item and whether the next
// page is before it.
func cursorStep(n int, before, after, ascending bool) (index int, older bool) {
	older = before || (!after && !ascending)
	// Items come in the list's order: newest first unless ascending.
	if older == ascending {
		return 0, older
	}
	return n - 1, older
}
