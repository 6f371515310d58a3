package store

import "context"

// Tag is one tag of a resource.
type Tag struct {
	Key   string
	Value string
}

// TagStore stores resource tags.
type TagStore interface {
	// TagPut adds or replaces tags.
	TagPut(ctx context.Context, resourceArn string, tags []Tag) error
	TagDelete(ctx context.Context, resourceArn string, keys []string) error
	// TagList returns the tags sorted by key.
	TagList(ctx context.Context, resourceArn string) ([]Tag, error)
}

// MetaStore keeps the server's own settings, such as the key of its task
// tokens, with the data they belong to.
type MetaStore interface {
	// MetaGetOrPut returns the value stored under key, storing value there
	// first when the key has none.
	MetaGetOrPut(ctx context.Context, key string, value []byte) ([]byte, error)
}
