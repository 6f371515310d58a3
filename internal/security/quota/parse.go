package quota

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PresetAWS is the --quotas value for AWS's default quotas.
const PresetAWS = "aws"

// Parse reads the quotas of "stepwise serve": preset is "" (none) or
// "aws" (AWS's defaults), and each spec is OPERATION=BUCKET/REFILL (an API
// operation, or StateTransition; a bucket of BUCKET tokens refilled at
// REFILL tokens a second), which replaces the preset's quota of
// OPERATION. It returns nil when there is no quota.
func Parse(preset string, specs []string) (map[string]Limit, error) {
	var limits map[string]Limit
	switch preset {
	case "":
	case PresetAWS:
		limits = AWS()
	default:
		return nil, fmt.Errorf("quotas %q: the only preset is %q (AWS's default quotas)", preset, PresetAWS)
	}
	given := map[string]bool{}
	for _, spec := range specs {
		op, l, err := ParseLimit(spec)
		if err != nil {
			return nil, err
		}
		if given[op] {
			return nil, fmt.Errorf("quota %q: %s is given twice", spec, op)
		}
		given[op] = true
		if limits == nil {
			limits = map[string]Limit{}
		}
		limits[op] = l
	}
	return limits, nil
}

// ParseLimit reads one OPERATION=BUCKET/REFILL.
func ParseLimit(spec string) (string, Limit, error) {
	bad := func(format string, args ...any) (string, Limit, error) {
		return "", Limit{}, fmt.Errorf("quota %q: %s", spec, fmt.Sprintf(format, args...))
	}
	op, value, ok := strings.Cut(spec, "=")
	bucket, refill, ok2 := strings.Cut(value, "/")
	if !ok || !ok2 {
		return bad("give it as OPERATION=BUCKET/REFILL_PER_SECOND, e.g. StartExecution=1300/300")
	}
	if op != StateTransition && !IsOperation(op) {
		return bad("%q is neither a Step Functions API operation (e.g. StartExecution) nor %s", op, StateTransition)
	}
	b, err := strconv.Atoi(bucket)
	if err != nil || b < 1 {
		return bad("bucket %q: must be a whole number of tokens, at least 1", bucket)
	}
	r, err := strconv.ParseFloat(refill, 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) {
		return bad("refill %q: must be a positive number of tokens per second", refill)
	}
	return op, Limit{Bucket: b, Refill: r}, nil
}
