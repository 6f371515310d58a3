package server

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stepwise/config"
	"stepwise/integration"
	"stepwise/scheduler"
)

// bucketObjects is the lister of the file-arrival triggers' buckets, at
// the endpoint given for s3 (--aws-endpoint or --endpoint s3=); nil
// without one, so that bucket triggers are refused saying so.
func bucketObjects(cfg *config.Serve) scheduler.ObjectLister {
	ic := integration.Config{Region: cfg.Region, Account: cfg.Account,
		Endpoint: cfg.Integrations.AWSEndpoint, Endpoints: cfg.Integrations.Endpoints}
	if ic.EndpointFor("s3") == "" {
		return nil
	}
	var (
		mu   sync.Mutex
		list scheduler.ObjectLister
	)
	return func(ctx context.Context, bucket, prefix string) ([]scheduler.Object, error) {
		mu.Lock()
		if list == nil {
			awsCfg, endpoint, err := ic.AWSConfig(ctx, "s3")
			if err != nil {
				mu.Unlock()
				return nil, err
			}
			list = scheduler.S3Objects(s3.NewFromConfig(awsCfg, func(o *s3.Options) {
				o.BaseEndpoint = aws.String(endpoint)
				o.UsePathStyle = true
			}))
		}
		l := list
		mu.Unlock()
		return l(ctx, bucket, prefix)
	}
}
