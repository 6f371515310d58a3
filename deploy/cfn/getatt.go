package cfn

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:generate go run getatt_gen.go

// attrTable is, a line per resource type of the CloudFormation registry,
// the type and the attributes Fn::GetAtt accepts for it, each
// NAME:FORM (FORM as Attribute says), gzip-compressed. getatt_gen.go
// writes it from cfn-lint's copy of the resource provider schemas
// (attrSource says which).
//
//go:embed getatt.txt.gz
var attrTable []byte

var (
	attrsOnce sync.Once
	attrs     map[string]map[string]byte
)

func loadAttrs() {
	attrs = map[string]map[string]byte{}
	zr, err := gzip.NewReader(bytes.NewReader(attrTable))
	if err != nil {
		panic("cfn: the embedded attribute table: " + err.Error())
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		m := make(map[string]byte, len(fields)-1)
		for _, f := range fields[1:] {
			name, form, _ := strings.Cut(f, ":")
			m[name] = form[0]
		}
		attrs[fields[0]] = m
	}
	if err := sc.Err(); err != nil || len(attrs) == 0 {
		panic(fmt.Sprintf("cfn: the embedded attribute table: %v", err))
	}
}

// Attribute says whether CloudFormation documents resource type typ
// (known) and, if so, whether Fn::GetAtt accepts attribute attr of it
// (ok), and the form of the attribute's value: 'a' an ARN, 'i' an id,
// 'h' a host name, 't' an IP address, 'p' a port, 'u' a URL, 'n' a
// number, 's' other text; upper case for a list of them. A type it does
// not know (a third-party or a new one, a custom resource, a SAM type)
// says nothing of its attributes.
func Attribute(typ, attr string) (form byte, known, ok bool) {
	attrsOnce.Do(loadAttrs)
	m, known := attrs[typ]
	if !known {
		return 0, false, false
	}
	if f, ok := m[attr]; ok {
		return f, true, true
	}
	if rest, dot := strings.CutPrefix(attr, "Outputs."); dot && rest != "" {
		if f, ok := m["Outputs.*"]; ok {
			return f, true, true
		}
	}
	return 0, true, false
}

// AttributeError is CloudFormation's refusal of an attribute a resource
// type does not have.
func AttributeError(id, attr string) error {
	return fmt.Errorf("Template error: resource %s does not support attribute type %s in Fn::GetAtt", id, attr)
}

// checkAttribute refuses, in CloudFormation's words, attribute attr of
// resource id when its type is one CloudFormation documents without it.
func (s *Stack) checkAttribute(id, attr, path string) *pathError {
	if _, known, ok := Attribute(s.t.Resources[id].Type, attr); known && !ok {
		return &pathError{path: path, msg: AttributeError(id, attr).Error()}
	}
	return nil
}
