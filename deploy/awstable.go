package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// AWS::DynamoDB::Table and AWS::Serverless::SimpleTable, at the AWS
// endpoint. Ref is the table's name; Fn::GetAtt gives Arn (and StreamArn
// when it has a stream). A new billing mode, throughput or stream is
// applied with UpdateTable; new keys or indexes make the table again.
type tableKind struct{}

// tableSpec is a table as made.
type tableSpec struct {
	Name        string                            `json:"name"`
	Keys        []ddbtypes.KeySchemaElement       `json:"keys"`
	Attributes  []ddbtypes.AttributeDefinition    `json:"attributes"`
	GSIs        []ddbtypes.GlobalSecondaryIndex   `json:"gsis,omitempty"`
	LSIs        []ddbtypes.LocalSecondaryIndex    `json:"lsis,omitempty"`
	BillingMode string                            `json:"billingMode"`
	Throughput  *ddbtypes.ProvisionedThroughput   `json:"throughput,omitempty"`
	StreamView  string                            `json:"streamView,omitempty"`
	Tags        map[string]string                 `json:"tags,omitempty"`
	TTL         *ddbtypes.TimeToLiveSpecification `json:"ttl,omitempty"`
}

// tableProps are the AWS::DynamoDB::Table properties applied here.
var tableProps = []string{"TableName", "KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes", "LocalSecondaryIndexes",
	"BillingMode", "ProvisionedThroughput", "StreamSpecification", "Tags", "TimeToLiveSpecification"}

// tableOf reads a table's properties, or a SimpleTable's.
func (x *run) tableOf(r *resource) (*tableSpec, error) {
	p := propsOf(r)
	name, err := p.str("TableName")
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = x.name(r.ID, 255)
	}
	t := &tableSpec{Name: name}
	if r.Type == samSimpleTbl {
		return t, x.simpleTable(r, p, t)
	}
	if err := p.decodeInto("KeySchema", &t.Keys); err != nil {
		return nil, err
	}
	if len(t.Keys) == 0 {
		return nil, p.errorf("KeySchema", "a table needs its KeySchema")
	}
	if err := p.decodeInto("AttributeDefinitions", &t.Attributes); err != nil {
		return nil, err
	}
	if p.has("GlobalSecondaryIndexes") {
		if err := lenientDecode(p.m["GlobalSecondaryIndexes"], &t.GSIs); err != nil {
			return nil, fmt.Errorf("%s: %w", p.path("GlobalSecondaryIndexes"), err)
		}
	}
	if p.has("LocalSecondaryIndexes") {
		if err := lenientDecode(p.m["LocalSecondaryIndexes"], &t.LSIs); err != nil {
			return nil, fmt.Errorf("%s: %w", p.path("LocalSecondaryIndexes"), err)
		}
	}
	if t.BillingMode, err = p.str("BillingMode"); err != nil {
		return nil, err
	}
	if t.BillingMode == "" {
		t.BillingMode = string(ddbtypes.BillingModeProvisioned)
	}
	if p.has("ProvisionedThroughput") {
		t.Throughput = &ddbtypes.ProvisionedThroughput{}
		if err := p.decodeInto("ProvisionedThroughput", t.Throughput); err != nil {
			return nil, err
		}
	}
	if t.BillingMode == string(ddbtypes.BillingModeProvisioned) && t.Throughput == nil {
		return nil, p.errorf("ProvisionedThroughput", "a PROVISIONED table needs its ProvisionedThroughput (or BillingMode: PAY_PER_REQUEST)")
	}
	if s, ok, err := p.obj("StreamSpecification"); err != nil {
		return nil, err
	} else if ok {
		if t.StreamView, err = s.str("StreamViewType"); err != nil {
			return nil, err
		}
	}
	if p.has("TimeToLiveSpecification") {
		t.TTL = &ddbtypes.TimeToLiveSpecification{}
		if err := p.decodeInto("TimeToLiveSpecification", t.TTL); err != nil {
			return nil, err
		}
	}
	if t.Tags, err = tagsOf(r.Props["Tags"]); err != nil {
		return nil, fmt.Errorf("Properties.%w", err)
	}
	return t, nil
}

// simpleTable reads SAM's SimpleTable: a PrimaryKey {Name, Type} (id, a
// String, when left out), on demand unless it has a
// ProvisionedThroughput.
func (x *run) simpleTable(r *resource, p resProps, t *tableSpec) error {
	key, typ := "id", "String"
	if pk, ok, err := p.obj("PrimaryKey"); err != nil {
		return err
	} else if ok {
		var err error
		if key, err = pk.str("Name"); err != nil {
			return err
		}
		if typ, err = pk.str("Type"); err != nil {
			return err
		}
	}
	attrType := map[string]ddbtypes.ScalarAttributeType{"String": ddbtypes.ScalarAttributeTypeS, "Number": ddbtypes.ScalarAttributeTypeN, "Binary": ddbtypes.ScalarAttributeTypeB}[typ]
	if key == "" || attrType == "" {
		return p.errorf("PrimaryKey", "{Name, Type}: Type is String, Number or Binary")
	}
	t.Keys = []ddbtypes.KeySchemaElement{{AttributeName: aws.String(key), KeyType: ddbtypes.KeyTypeHash}}
	t.Attributes = []ddbtypes.AttributeDefinition{{AttributeName: aws.String(key), AttributeType: attrType}}
	t.BillingMode = string(ddbtypes.BillingModePayPerRequest)
	if p.has("ProvisionedThroughput") {
		t.BillingMode = string(ddbtypes.BillingModeProvisioned)
		t.Throughput = &ddbtypes.ProvisionedThroughput{}
		if err := p.decodeInto("ProvisionedThroughput", t.Throughput); err != nil {
			return err
		}
	}
	var err error
	t.Tags, err = tagsOf(r.Props["Tags"])
	if err != nil {
		return fmt.Errorf("Properties.%w", err)
	}
	return nil
}

// lenientDecode reads v as JSON into out, ignoring fields out has not
// (CloudFormation's index settings the API does not take).
func lenientDecode(v, out any) error {
	if err := decodeNumbers(v, out, false); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func (tableKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	t, err := x.tableOf(r)
	if err != nil {
		return nil, "", err
	}
	if x.d.AWS == nil {
		arn := "arn:" + x.partition() + ":dynamodb:" + x.region() + ":" + x.account() + ":table/" + t.Name
		return x.skipAWS(r, t.Name, map[string]any{"Arn": arn})
	}
	if r.Type == samSimpleTbl {
		x.warnIgnored(r, "TableName", "PrimaryKey", "ProvisionedThroughput", "Tags")
	} else {
		x.warnIgnored(r, tableProps...)
	}
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, "", err
	}
	client := dynamodb.NewFromConfig(cfg)
	return x.applyAt(ctx, r, prev, &atEndpoint{
		name:   t.Name,
		spec:   t,
		find:   func(ctx context.Context, name string) (*Record, error) { return findTable(ctx, client, name) },
		create: func(ctx context.Context) error { return createTable(ctx, client, t) },
		update: func(ctx context.Context, oldSpec json.RawMessage) (bool, error) {
			var old tableSpec
			if err := json.Unmarshal(oldSpec, &old); err != nil {
				return true, nil
			}
			return updateTable(ctx, client, &old, t)
		},
		remove: func(ctx context.Context, rec *Record) error { return deleteTable(ctx, client, rec.Physical) },
	})
}

func (tableKind) nameOf(x *run, r *resource) (string, error) {
	t, err := x.tableOf(r)
	if err != nil {
		return "", err
	}
	return t.Name, nil
}

func (tableKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	return findTable(ctx, dynamodb.NewFromConfig(cfg), name)
}

func (tableKind) remove(ctx context.Context, x *run, id string, rec *Record) error {
	return x.removeAt(ctx, id, rec, func(ctx context.Context, cfg aws.Config) error {
		return deleteTable(ctx, dynamodb.NewFromConfig(cfg), rec.Physical)
	})
}

func findTable(ctx context.Context, client *dynamodb.Client, name string) (*Record, error) {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var nf *ddbtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	attrs := map[string]any{"Arn": aws.ToString(out.Table.TableArn)}
	if s := aws.ToString(out.Table.LatestStreamArn); s != "" {
		attrs["StreamArn"] = s
	}
	return &Record{Physical: name, Attrs: attrs, created: aws.ToTime(out.Table.CreationDateTime)}, nil
}

// tableWait bounds the wait for a table to be made or deleted.
const tableWait = 5 * time.Minute

func createTable(ctx context.Context, client *dynamodb.Client, t *tableSpec) error {
	in := &dynamodb.CreateTableInput{
		TableName:              aws.String(t.Name),
		KeySchema:              t.Keys,
		AttributeDefinitions:   t.Attributes,
		GlobalSecondaryIndexes: t.GSIs,
		LocalSecondaryIndexes:  t.LSIs,
		BillingMode:            ddbtypes.BillingMode(t.BillingMode),
		ProvisionedThroughput:  t.Throughput,
	}
	if t.StreamView != "" {
		in.StreamSpecification = &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewType(t.StreamView)}
	}
	for _, k := range sortedKeys(t.Tags) {
		in.Tags = append(in.Tags, ddbtypes.Tag{Key: aws.String(k), Value: aws.String(t.Tags[k])})
	}
	if _, err := client.CreateTable(ctx, in); err != nil {
		return err
	}
	if err := dynamodb.NewTableExistsWaiter(client).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name)}, tableWait); err != nil {
		return fmt.Errorf("table %s: %w", t.Name, err)
	}
	if t.TTL != nil {
		if _, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(t.Name), TimeToLiveSpecification: t.TTL}); err != nil {
			return err
		}
	}
	return nil
}

// updateTable changes a table in place, or says it must be made again
// (new keys or indexes).
func updateTable(ctx context.Context, client *dynamodb.Client, old, t *tableSpec) (replace bool, err error) {
	if !sameJSON(old.Keys, t.Keys) || !sameJSON(old.LSIs, t.LSIs) {
		return true, nil
	}
	name := aws.String(t.Name)
	// Global secondary indexes change in place, one at a time, as
	// CloudFormation changes them: the gone and changed ones deleted,
	// the new and changed ones made.
	if err := updateGSIs(ctx, client, old, t); err != nil {
		return false, err
	}
	if old.BillingMode != t.BillingMode || !sameJSON(old.Throughput, t.Throughput) {
		in := &dynamodb.UpdateTableInput{TableName: name, BillingMode: ddbtypes.BillingMode(t.BillingMode)}
		if t.BillingMode == string(ddbtypes.BillingModeProvisioned) {
			in.ProvisionedThroughput = t.Throughput
		}
		if _, err := client.UpdateTable(ctx, in); err != nil {
			return false, err
		}
	}
	if old.StreamView != t.StreamView {
		spec := &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(t.StreamView != "")}
		if t.StreamView != "" {
			spec.StreamViewType = ddbtypes.StreamViewType(t.StreamView)
		}
		if _, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: name, StreamSpecification: spec}); err != nil {
			return false, err
		}
	}
	if !sameJSON(old.TTL, t.TTL) {
		ttl := t.TTL
		if ttl == nil && old.TTL != nil {
			ttl = &ddbtypes.TimeToLiveSpecification{AttributeName: old.TTL.AttributeName, Enabled: aws.Bool(false)}
		}
		if _, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: name, TimeToLiveSpecification: ttl}); err != nil {
			return false, err
		}
	}
	gone, changed := tagChanges(old.Tags, t.Tags)
	if len(gone) > 0 || len(changed) > 0 {
		desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: name})
		if err != nil {
			return false, err
		}
		arn := desc.Table.TableArn
		if len(gone) > 0 {
			if _, err := client.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: arn, TagKeys: gone}); err != nil {
				return false, err
			}
		}
		if len(changed) > 0 {
			var tags []ddbtypes.Tag
			for _, k := range sortedKeys(changed) {
				tags = append(tags, ddbtypes.Tag{Key: aws.String(k), Value: aws.String(changed[k])})
			}
			if _, err := client.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: arn, Tags: tags}); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

func deleteTable(ctx context.Context, client *dynamodb.Client, name string) error {
	_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	var nf *ddbtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil
	} else if err != nil {
		return err
	}
	return dynamodb.NewTableNotExistsWaiter(client).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, tableWait)
}

// sameJSON says whether two values have the same JSON.
func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// updateGSIs brings a table's global secondary indexes from old's to t's.
func updateGSIs(ctx context.Context, client *dynamodb.Client, old, t *tableSpec) error {
	was := map[string]ddbtypes.GlobalSecondaryIndex{}
	for _, g := range old.GSIs {
		was[aws.ToString(g.IndexName)] = g
	}
	now := map[string]ddbtypes.GlobalSecondaryIndex{}
	for _, g := range t.GSIs {
		now[aws.ToString(g.IndexName)] = g
	}
	name := aws.String(t.Name)
	update := func(u ddbtypes.GlobalSecondaryIndexUpdate) error {
		in := &dynamodb.UpdateTableInput{TableName: name, GlobalSecondaryIndexUpdates: []ddbtypes.GlobalSecondaryIndexUpdate{u}}
		if u.Create != nil {
			in.AttributeDefinitions = t.Attributes
		}
		if _, err := client.UpdateTable(ctx, in); err != nil {
			return err
		}
		return dynamodb.NewTableExistsWaiter(client).Wait(ctx, &dynamodb.DescribeTableInput{TableName: name}, tableWait)
	}
	for _, n := range sortedKeys(was) {
		g, kept := now[n]
		if kept && sameJSON(g.KeySchema, was[n].KeySchema) && sameJSON(g.Projection, was[n].Projection) {
			if !sameJSON(g.ProvisionedThroughput, was[n].ProvisionedThroughput) && g.ProvisionedThroughput != nil {
				if err := update(ddbtypes.GlobalSecondaryIndexUpdate{Update: &ddbtypes.UpdateGlobalSecondaryIndexAction{
					IndexName: g.IndexName, ProvisionedThroughput: g.ProvisionedThroughput}}); err != nil {
					return err
				}
			}
			continue
		}
		if err := update(ddbtypes.GlobalSecondaryIndexUpdate{Delete: &ddbtypes.DeleteGlobalSecondaryIndexAction{IndexName: aws.String(n)}}); err != nil {
			return err
		}
	}
	for _, n := range sortedKeys(now) {
		g := now[n]
		if w, had := was[n]; had && sameJSON(g.KeySchema, w.KeySchema) && sameJSON(g.Projection, w.Projection) {
			continue
		}
		if err := update(ddbtypes.GlobalSecondaryIndexUpdate{Create: &ddbtypes.CreateGlobalSecondaryIndexAction{
			IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection, ProvisionedThroughput: g.ProvisionedThroughput}}); err != nil {
			return err
		}
	}
	return nil
}
