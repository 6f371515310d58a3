package intrinsic

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"

	"stepwise/jsonvalue"
)

var hashFunctions = []*function{
	{name: "States.Hash", minArgs: 2, maxArgs: 2, eval: evalHash},
}

// hashAlgorithms are the names States.Hash (and JSONata's $hash) accept,
// spelled exactly.
var hashAlgorithms = map[string]func() hash.Hash{
	"MD5":     md5.New,
	"SHA-1":   sha1.New,
	"SHA-256": sha256.New,
	"SHA-384": sha512.New384,
	"SHA-512": sha512.New,
}

// NewHash is a new hash of the algorithm States.Hash names alg (MD5,
// SHA-1, SHA-256, SHA-384, SHA-512, spelled exactly), nil for any other.
func NewHash(alg string) hash.Hash {
	if h := hashAlgorithms[alg]; h != nil {
		return h()
	}
	return nil
}

// evalHash returns the lowercase hex digest of the UTF-8 bytes of the data.
// Data that is not a string is hashed as Java prints it (AWS accepts 123 or
// {} here). The data may be at most MaxEncodingInput characters long.
func evalHash(c *Call, args []any) (any, error) {
	alg, ok := args[1].(string)
	if !ok {
		return nil, invalidArgs(c)
	}
	newHash := hashAlgorithms[alg]
	if newHash == nil {
		return nil, invalidArgs(c)
	}
	data := javaString(args[0])
	if jsonvalue.UTF16Len(data) > MaxEncodingInput {
		return nil, invalidArgs(c)
	}
	h := newHash()
	h.Write([]byte(data))
	var sum [sha512.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])), nil
}
