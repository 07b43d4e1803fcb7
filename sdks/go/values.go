package agentry

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"
)

// Ptr returns a pointer to v, for optional fields: Limit: agentry.Ptr(50), SortBy: agentry.Ptr(agentry.SortByName).
func Ptr[T any](v T) *T { return &v }

// String returns a pointer to s, for optional string fields.
func String(s string) *string { return &s }

// Int returns a pointer to n, for optional integer fields.
func Int(n int) *int { return &n }

// Bool returns a pointer to b, for optional boolean fields.
func Bool(b bool) *bool { return &b }

// Float64 returns a pointer to f, for optional number fields.
func Float64(f float64) *float64 { return &f }

// Time returns a pointer to t, for optional date-time fields.
func Time(t time.Time) *time.Time { return &t }

// Nullable is an optional field that may also be sent as JSON null, which means something of its own: in an
// update, null resets modelProvider or model to the server's default, while leaving the field out keeps it.
// The zero Nullable is left out of the request.
//
//	agentry.UpdateAgentParams{Model: agentry.Value("gpt-4o")}   // set
//	agentry.UpdateAgentParams{Model: agentry.Null[string]()}    // reset to the default
//	agentry.UpdateAgentParams{}                                 // keep
type Nullable[T any] struct {
	value T
	state nullableState
}

type nullableState uint8

const (
	nullableUnset nullableState = iota
	nullableNull
	nullableValue
)

// Value returns a Nullable holding v.
func Value[T any](v T) Nullable[T] { return Nullable[T]{value: v, state: nullableValue} }

// Null returns a Nullable holding JSON null.
func Null[T any]() Nullable[T] { return Nullable[T]{state: nullableNull} }

// Get returns the value and true, or the zero value and false when the field is null or unset.
func (n Nullable[T]) Get() (T, bool) { return n.value, n.state == nullableValue }

// IsNull reports whether the field is JSON null.
func (n Nullable[T]) IsNull() bool { return n.state == nullableNull }

// IsSet reports whether the field is present: a value or null.
func (n Nullable[T]) IsSet() bool { return n.state != nullableUnset }

// IsZero reports whether the field is unset; encoding/json's omitzero leaves it out then.
func (n Nullable[T]) IsZero() bool { return n.state == nullableUnset }

// MarshalJSON encodes the value, or null.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.state != nullableValue {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

// UnmarshalJSON decodes a value or null.
func (n *Nullable[T]) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*n = Value(v)
	return nil
}

// marshalWithExtra encodes a struct's known fields (known, a type without this method) and then the keys of
// extra that are not among names.
func marshalWithExtra(known any, extra map[string]any, names ...string) ([]byte, error) {
	data, err := json.Marshal(known)
	if err != nil || len(extra) == 0 {
		return data, err
	}
	for _, key := range slices.Sorted(maps.Keys(extra)) {
		if slices.Contains(names, key) {
			continue
		}
		if data, err = appendField(data, key, extra[key]); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// unmarshalWithExtra decodes a JSON object's known fields into known and returns the keys not among names.
func unmarshalWithExtra(data []byte, known any, names ...string) (map[string]any, error) {
	if err := json.Unmarshal(data, known); err != nil {
		return nil, err
	}
	var all map[string]any
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	for _, name := range names {
		delete(all, name)
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}

// jsonKind is the first byte of an encoded JSON value: '"', '{', '[', 't', 'f', 'n' or a digit or '-'.
func jsonKind(data []byte) byte {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return 0
	}
	return data[0]
}

var errNoVariant = errors.New("none of the union's variants is set")

// jsonHasKey reports whether data is a JSON object with the key at its top level; the variant of a union of
// object types is told by a key only its objects have.
func jsonHasKey(data []byte, key string) bool {
	var object map[string]json.RawMessage
	if json.Unmarshal(data, &object) != nil {
		return false
	}
	_, ok := object[key]
	return ok
}
