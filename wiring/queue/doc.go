// Package queue runs the queue-like event sources of deployed stacks as
// Lambda's pollers do: an SQS queue's messages go to a function in
// batches (kind sqs); a topic's notifications reach a function through
// a queue Stepwise makes and subscribes to the topic (kind sns); a
// bucket's events through a queue the bucket notifies (kind s3).
//
// # SQS
//
// A poller per wire long-polls its queue at the AWS endpoint and hands
// each batch to the target as Lambda's SQS event. A batch the function
// took is deleted; one it failed on is left alone, so that the queue's
// visibility timeout brings the messages back and its RedrivePolicy
// moves them to a dead-letter queue, as on AWS. With
// ReportBatchItemFailures only the messages the function names stay.
//
//	receive ──▶ filter ──▶ deliver ──ok──▶ delete
//	   ▲                      │
//	   └──── visible again ◀──┘ failed
//
// # SNS and S3
//
// Both read a hidden queue at the endpoint: for a topic, one subscribed
// to it (raw delivery off, the wire's filter policy); for a bucket, one
// named in the bucket's notification configuration. Each message
// becomes one event: Lambda's SNS event, or the S3 event the bucket
// wrote. The queue and the subscription or notification outlive a
// server's stop (Close), so that a restart finds them; removing the
// wire deletes them.
package queue
