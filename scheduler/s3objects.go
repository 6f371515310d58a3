package scheduler

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Objects is the ObjectLister of an S3 client: ListObjectsV2, page
// after page.
func S3Objects(client *s3.Client) ObjectLister {
	return func(ctx context.Context, bucket, prefix string) ([]Object, error) {
		var out []Object
		pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			for _, o := range page.Contents {
				out = append(out, Object{Key: aws.ToString(o.Key), ETag: strings.Trim(aws.ToString(o.ETag), `"`), Size: aws.ToInt64(o.Size), Modified: aws.ToTime(o.LastModified)})
			}
		}
		return out, nil
	}
}
