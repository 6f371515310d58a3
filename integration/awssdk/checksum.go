package awssdk

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"strings"

	"stepwise/integration/awssdk/awsmodel"
)

// checksums are the request checksum algorithms, by name.
var checksums = map[string]func() hash.Hash{
	"CRC32":     func() hash.Hash { return crc32.NewIEEE() },
	"CRC32C":    func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) },
	"CRC64NVME": func() hash.Hash { return crc64.New(crc64.MakeTable(0x9a6c9329ac4bc9b5)) },
	"SHA1":      sha1.New,
	"SHA256":    sha256.New,
}

// addChecksum adds the body checksum an operation takes, as the AWS SDKs
// do: for operations with a checksum algorithm member (S3 PutObject) the
// algorithm given or CRC32, in x-amz-checksum-<algorithm>; for the older
// httpChecksumRequired operations, Content-MD5.
func addChecksum(r *request, op *awsmodel.Operation, in *structValue) {
	switch {
	case op.HTTPChecksum != nil && (op.HTTPChecksum.RequestAlgorithmMember != "" || op.HTTPChecksum.RequestChecksumRequired):
		algorithm := "CRC32"
		member, hasMember := in.shape.Members.Named(op.HTTPChecksum.RequestAlgorithmMember)
		if v, ok := in.get(op.HTTPChecksum.RequestAlgorithmMember); ok {
			algorithm, _ = v.(string)
		}
		newHash, ok := checksums[strings.ToUpper(algorithm)]
		header := "x-amz-checksum-" + strings.ToLower(algorithm)
		if !ok || r.header.Get(header) != "" {
			return
		}
		r.header.Set(header, sum(newHash(), r.body))
		if hasMember && member.Location == "header" {
			r.header.Set(member.WireName(), strings.ToUpper(algorithm))
		}
	case op.HTTPChecksumRequired && r.header.Get("Content-MD5") == "":
		r.header.Set("Content-MD5", sum(md5.New(), r.body))
	}
}

func sum(h hash.Hash, body []byte) string {
	h.Write(body)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
