package dynamodb

import (
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"stepwise/integration"
	"stepwise/jsonvalue"
)

// response holds the members of a DynamoDB response a task result shows.
type response struct {
	Attributes            map[string]types.AttributeValue
	ConsumedCapacity      *types.ConsumedCapacity
	Item                  map[string]types.AttributeValue
	ItemCollectionMetrics *types.ItemCollectionMetrics
	Metadata              middleware.Metadata
}

// result is the task result: the members present, in alphabetical order
// as AWS's SDK for Java writes them, then the SDK's HTTP metadata.
// ConsumedCapacity and ItemCollectionMetrics are shown only when the
// request asked for them, as DynamoDB returns them only then (moto
// returns ConsumedCapacity always).
func (r *response) result(capacity types.ReturnConsumedCapacity, metrics types.ReturnItemCollectionMetrics) (any, error) {
	out := jsonvalue.NewObject(6)
	if err := setItem(out, "Attributes", r.Attributes); err != nil {
		return nil, err
	}
	if r.ConsumedCapacity != nil && capacity != "" && capacity != types.ReturnConsumedCapacityNone {
		out.Set("ConsumedCapacity", consumedCapacity(r.ConsumedCapacity))
	}
	if err := setItem(out, "Item", r.Item); err != nil {
		return nil, err
	}
	if r.ItemCollectionMetrics != nil && metrics != "" && metrics != types.ReturnItemCollectionMetricsNone {
		icm, err := itemCollectionMetrics(r.ItemCollectionMetrics)
		if err != nil {
			return nil, err
		}
		out.Set("ItemCollectionMetrics", icm)
	}
	integration.SdkMetadata(out, r.Metadata)
	return out, nil
}

// setItem sets a map of AttributeValues, when there is one.
func setItem(out *jsonvalue.Object, name string, item map[string]types.AttributeValue) error {
	if item == nil {
		return nil
	}
	obj, err := encodeItem(item)
	if err != nil {
		return err
	}
	out.Set(name, obj)
	return nil
}

func consumedCapacity(cc *types.ConsumedCapacity) *jsonvalue.Object {
	obj := jsonvalue.NewObject(7)
	setFloat(obj, "CapacityUnits", cc.CapacityUnits)
	setCapacities(obj, "GlobalSecondaryIndexes", cc.GlobalSecondaryIndexes)
	setCapacities(obj, "LocalSecondaryIndexes", cc.LocalSecondaryIndexes)
	setFloat(obj, "ReadCapacityUnits", cc.ReadCapacityUnits)
	if cc.Table != nil {
		obj.Set("Table", capacity(*cc.Table))
	}
	if cc.TableName != nil {
		obj.Set("TableName", *cc.TableName)
	}
	setFloat(obj, "WriteCapacityUnits", cc.WriteCapacityUnits)
	return obj
}

func itemCollectionMetrics(icm *types.ItemCollectionMetrics) (*jsonvalue.Object, error) {
	obj := jsonvalue.NewObject(2)
	if err := setItem(obj, "ItemCollectionKey", icm.ItemCollectionKey); err != nil {
		return nil, err
	}
	if icm.SizeEstimateRangeGB != nil {
		obj.Set("SizeEstimateRangeGB", encodeList(icm.SizeEstimateRangeGB, func(f float64) any { return jsonvalue.NumberFromFloat(f) }))
	}
	return obj, nil
}

func capacity(c types.Capacity) *jsonvalue.Object {
	obj := jsonvalue.NewObject(3)
	setFloat(obj, "CapacityUnits", c.CapacityUnits)
	setFloat(obj, "ReadCapacityUnits", c.ReadCapacityUnits)
	setFloat(obj, "WriteCapacityUnits", c.WriteCapacityUnits)
	return obj
}

// setCapacities sets the capacities of indexes, sorted by index name.
func setCapacities(obj *jsonvalue.Object, name string, byIndex map[string]types.Capacity) {
	if byIndex == nil {
		return
	}
	names := make([]string, 0, len(byIndex))
	for index := range byIndex {
		names = append(names, index)
	}
	slices.Sort(names)
	out := jsonvalue.NewObject(len(names))
	for _, index := range names {
		out.Set(index, capacity(byIndex[index]))
	}
	obj.Set(name, out)
}

func setFloat(obj *jsonvalue.Object, name string, f *float64) {
	if f != nil {
		obj.Set(name, jsonvalue.NumberFromFloat(*f))
	}
}
