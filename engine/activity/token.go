package activity

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"sync"
)

// Task tokens name a task (execution ARN and task id) and carry a keyed
// hash of both, so they cannot be guessed or forged, and they are the same
// after a restart or a replay: a worker that took a task before a crash can
// still complete it.

const tokenMACSize = 16

// Tokens makes and reads the task tokens of one key.
type Tokens struct {
	key  []byte
	macs sync.Pool // keyed hashes
}

// NewTokens returns the tokens of key, which must stay the same across
// restarts for tokens handed out before one to work after.
func NewTokens(key []byte) *Tokens { return &Tokens{key: key} }

// Make returns the token of a task.
func (k *Tokens) Make(arn, id string) string {
	var b []byte
	b = append(b, arn...)
	b = append(b, 0)
	b = append(b, id...)
	b = append(b, 0)
	b = append(b, k.mac(arn, id)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (k *Tokens) mac(arn, id string) []byte {
	h, _ := k.macs.Get().(hash.Hash)
	if h == nil {
		h = hmac.New(sha256.New, k.key)
	}
	h.Reset()
	h.Write([]byte(arn))
	h.Write([]byte{0})
	h.Write([]byte(id))
	sum := h.Sum(nil)[:tokenMACSize]
	k.macs.Put(h)
	return sum
}

// Parse returns the task a token names, if it is genuine.
func (k *Tokens) Parse(tok string) (arn, id string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", "", false
	}
	parts := bytes.SplitN(b, []byte{0}, 3)
	if len(parts) != 3 || len(parts[2]) != tokenMACSize {
		return "", "", false
	}
	arn, id = string(parts[0]), string(parts[1])
	return arn, id, hmac.Equal(parts[2], k.mac(arn, id))
}
