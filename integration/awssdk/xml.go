package awssdk

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

// xmlNode is an element of an XML response.
type xmlNode struct {
	name     string // local name
	attrs    []xml.Attr
	children []*xmlNode
	text     strings.Builder
}

// parseXML reads an XML document into its root element.
func parseXML(data []byte) (*xmlNode, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	var stack []*xmlNode
	var root *xmlNode
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{name: t.Name.Local, attrs: t.Attr}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no XML element")
	}
	return root, nil
}

// child returns the first child element named name.
func (n *xmlNode) child(name string) *xmlNode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// all returns the child elements named name.
func (n *xmlNode) all(name string) []*xmlNode {
	var out []*xmlNode
	for _, c := range n.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// find returns the first element named name in n's subtree.
func (n *xmlNode) find(name string) *xmlNode {
	if n.name == name {
		return n
	}
	for _, c := range n.children {
		if f := c.find(name); f != nil {
			return f
		}
	}
	return nil
}

// attr returns an attribute by its (local) name.
func (n *xmlNode) attr(name string) (string, bool) {
	_, local, _ := strings.Cut(name, ":")
	if local == "" {
		local = name
	}
	for _, a := range n.attrs {
		if a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

// flattened reports whether a list or map member repeats its items in
// place of a wrapping element.
func flattened(ref *awsmodel.Ref) bool { return ref.Flattened || ref.Shape.Flattened }

// fromXML is a response element as the task's result.
func fromXML(n *xmlNode, s *awsmodel.Shape) any {
	switch s.Type {
	case "structure":
		var fs outFields
		structFromXML(&fs, n, s)
		return fs.object("")
	case "list":
		return listFromXML(n.all(cmpName(s.Member.LocationName, "member")), s)
	case "map":
		return mapFromXML(n.all("entry"), s)
	}
	v, _ := scalarValue(n.text.String(), s)
	return v
}

// structFromXML adds the body members of an element to fs.
func structFromXML(fs *outFields, n *xmlNode, s *awsmodel.Shape) {
	for _, m := range s.Members {
		if m.Location != "" {
			continue
		}
		name := m.WireName()
		switch {
		case m.XMLAttribute:
			if text, ok := n.attr(name); ok {
				if v, ok := scalarValue(text, m.Shape); ok {
					fs.add(m.Name, v)
				}
			}
		case m.Shape.Type == "list" && flattened(m.Ref):
			if items := n.all(name); len(items) > 0 {
				fs.add(m.Name, listFromXML(items, m.Shape))
			}
		case m.Shape.Type == "map" && flattened(m.Ref):
			if entries := n.all(name); len(entries) > 0 {
				fs.add(m.Name, mapFromXML(entries, m.Shape))
			}
		default:
			if c := n.child(name); c != nil {
				if v := fromXML(c, m.Shape); v != nil {
					fs.add(m.Name, v)
				}
			}
		}
	}
}

func listFromXML(items []*xmlNode, s *awsmodel.Shape) []any {
	out := make([]any, 0, len(items))
	for _, item := range items {
		out = append(out, fromXML(item, s.Member.Shape))
	}
	return out
}

func mapFromXML(entries []*xmlNode, s *awsmodel.Shape) *jsonvalue.Object {
	out := jsonvalue.NewObject(len(entries))
	for _, e := range entries {
		k, v := e.child(cmpName(s.Key.LocationName, "key")), e.child(cmpName(s.Value.LocationName, "value"))
		if k != nil && v != nil {
			out.Set(k.text.String(), fromXML(v, s.Value.Shape))
		}
	}
	return out
}

func cmpName(name, def string) string {
	if name == "" {
		return def
	}
	return name
}

// xmlWriter writes request bodies of the rest-xml protocol.
type xmlWriter struct {
	b bytes.Buffer
}

// element writes v as the element name, with the namespace ns.
func (w *xmlWriter) element(name string, v any, ref *awsmodel.Ref, s *awsmodel.Shape, ns *awsmodel.XMLNamespace) {
	w.b.WriteString("<" + name)
	if ns != nil && ns.URI != "" {
		attr := "xmlns"
		if ns.Prefix != "" {
			attr += ":" + ns.Prefix
		}
		w.attr(attr, ns.URI)
	}
	if sv, ok := v.(*structValue); ok {
		w.attributes(sv)
	}
	w.b.WriteString(">")
	w.content(v, ref, s)
	w.b.WriteString("</" + name + ">")
}

func (w *xmlWriter) attr(name, value string) {
	w.b.WriteString(" " + name + `="`)
	_ = xml.EscapeText(&w.b, []byte(value))
	w.b.WriteString(`"`)
}

// attributes writes a structure's members that are XML attributes.
func (w *xmlWriter) attributes(sv *structValue) {
	for _, f := range sv.fields {
		if !f.XMLAttribute {
			continue
		}
		if f.XMLNamespace != nil && f.XMLNamespace.Prefix != "" {
			w.attr("xmlns:"+f.XMLNamespace.Prefix, f.XMLNamespace.URI)
		}
		w.attr(f.WireName(), scalarText(f.value, timestampFormat(f.Ref, f.Shape, ""), "iso8601"))
	}
}

// content writes what goes inside v's element.
func (w *xmlWriter) content(v any, ref *awsmodel.Ref, s *awsmodel.Shape) {
	switch t := v.(type) {
	case *structValue:
		for _, f := range t.fields {
			if f.Location == "" && !f.XMLAttribute {
				w.member(f.WireName(), f.value, f.Ref)
			}
		}
	case []any:
		for _, e := range t {
			w.element(cmpName(s.Member.LocationName, "member"), e, s.Member, s.Member.Shape, s.Member.XMLNamespace)
		}
	case mapValue:
		for _, e := range t {
			w.b.WriteString("<entry>")
			w.mapEntry(e, s)
			w.b.WriteString("</entry>")
		}
	default:
		_ = xml.EscapeText(&w.b, []byte(scalarText(v, timestampFormat(ref, s, ""), "iso8601")))
	}
}

// member writes a structure member; flattened lists and maps repeat the
// member's element for each item.
func (w *xmlWriter) member(name string, v any, ref *awsmodel.Ref) {
	switch t := v.(type) {
	case []any:
		if flattened(ref) {
			for _, e := range t {
				w.element(name, e, ref.Shape.Member, ref.Shape.Member.Shape, ref.XMLNamespace)
			}
			return
		}
	case mapValue:
		if flattened(ref) {
			for _, e := range t {
				w.b.WriteString("<" + name + ">")
				w.mapEntry(e, ref.Shape)
				w.b.WriteString("</" + name + ">")
			}
			return
		}
	}
	w.element(name, v, ref, ref.Shape, ref.XMLNamespace)
}

func (w *xmlWriter) mapEntry(e mapEntry, s *awsmodel.Shape) {
	w.element(cmpName(s.Key.LocationName, "key"), e.key, s.Key, s.Key.Shape, nil)
	w.element(cmpName(s.Value.LocationName, "value"), e.value, s.Value, s.Value.Shape, nil)
}
