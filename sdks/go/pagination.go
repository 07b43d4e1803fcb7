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
	return func(yield func(T, error) bool) {
		for page := p; ; {
			for _, item := range page.Data {
				if !yield(item, nil) {
					return
				}
			}
			if !page.HasNextPage() {
				return
			}
			next, err := page.NextPage(ctx)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			page = next
		}
	}
}

// paginate iterates over every item of a listing from its first page.
func paginate[T any](ctx context.Context, first func(ctx context.Context) (*Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		page, err := first(ctx)
		if err != nil {
			var zero T
			yield(zero, err)
			return
		}
		page.All(ctx)(yield)
	}
}
