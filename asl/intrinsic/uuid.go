package intrinsic

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

var uuidFunctions = []*function{
	{name: "States.UUID", minArgs: 0, maxArgs: 0, evalRand: evalUUID},
}

// evalUUID returns a random (version 4) UUID in lowercase canonical form.
func evalUUID(_ *Call, r *rand.Rand, _ []any) (any, error) {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], r.Uint64())
	binary.LittleEndian.PutUint64(u[8:], r.Uint64())
	return UUIDv4(u), nil
}

// UUIDv4 makes random bytes a version 4 UUID in lowercase canonical form.
func UUIDv4(u [16]byte) string {
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
