package service

import (
	"strconv"
	"time"
	"unicode/utf8"

	"stepwise/history"
)

// AppendJSON appends the answer as encoding/json writes it (without
// escaping HTML), byte for byte, without reflection: a StartSyncExecution
// answer is written for every call.
func (o *StartSyncExecutionOutput) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"executionArn":`...)
	dst = appendJSONString(dst, o.ExecutionArn)
	if o.StateMachineArn != "" {
		dst = append(dst, `,"stateMachineArn":`...)
		dst = appendJSONString(dst, o.StateMachineArn)
	}
	if o.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, o.Name)
	}
	dst = append(dst, `,"startDate":`...)
	dst = appendEpoch(dst, o.StartDate)
	dst = append(dst, `,"stopDate":`...)
	dst = appendEpoch(dst, o.StopDate)
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, o.Status)
	for _, m := range [...]struct {
		name string
		v    *string
	}{{`,"error":`, o.Error}, {`,"cause":`, o.Cause}, {`,"input":`, o.Input}} {
		if m.v != nil {
			dst = appendJSONString(append(dst, m.name...), *m.v)
		}
	}
	if o.InputDetails != nil {
		dst = appendDataDetails(append(dst, `,"inputDetails":`...), o.InputDetails)
	}
	if o.Output != nil {
		dst = appendJSONString(append(dst, `,"output":`...), *o.Output)
	}
	if o.OutputDetails != nil {
		dst = appendDataDetails(append(dst, `,"outputDetails":`...), o.OutputDetails)
	}
	if o.TraceHeader != nil {
		dst = appendJSONString(append(dst, `,"traceHeader":`...), *o.TraceHeader)
	}
	if b := o.BillingDetails; b != nil {
		dst = append(dst, `,"billingDetails":{"billedMemoryUsedInMB":`...)
		dst = strconv.AppendInt(dst, b.BilledMemoryUsedInMB, 10)
		dst = append(dst, `,"billedDurationInMilliseconds":`...)
		dst = strconv.AppendInt(dst, b.BilledDurationInMilliseconds, 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendDataDetails(dst []byte, d *DataDetails) []byte {
	return append(append(append(dst, `{"included":`...), strconv.FormatBool(d.Included)...), '}')
}

// appendEpoch is history.EpochTime's MarshalJSON.
func appendEpoch(dst []byte, t history.EpochTime) []byte {
	return strconv.AppendFloat(dst, float64(time.Time(t).UnixMilli())/1000, 'f', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string
// without escaping HTML: '"', '\\' and control characters escaped (\b,
// \f, \n, \r, \t by name), invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
