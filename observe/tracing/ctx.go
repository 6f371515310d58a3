package tracing

// ctxMap maps events to the spans the events after them belong to. It
// holds few entries (a running execution's open spans' latest events),
// kept in a slice inside the execution's trace until they are many.
type ctxMap struct {
	few  []ctxEntry
	buf  [8]ctxEntry
	many map[int64]*node
}

type ctxEntry struct {
	id int64
	n  *node
}

// maxFew is how many entries are searched in the slice before a map
// takes them.
const maxFew = 64

func (m *ctxMap) get(id int64) *node {
	if m.many != nil {
		return m.many[id]
	}
	for i := range m.few {
		if m.few[i].id == id {
			return m.few[i].n
		}
	}
	return nil
}

// set maps id to n, and returns the span id was mapped to (nil: none).
func (m *ctxMap) set(id int64, n *node) (old *node) {
	if m.many != nil {
		old = m.many[id]
		m.many[id] = n
		return old
	}
	for i := range m.few {
		if m.few[i].id == id {
			old, m.few[i].n = m.few[i].n, n
			return old
		}
	}
	if len(m.few) < maxFew {
		if m.few == nil {
			m.few = m.buf[:0]
		}
		m.few = append(m.few, ctxEntry{id, n})
		return nil
	}
	m.many = make(map[int64]*node, 2*maxFew)
	for _, e := range m.few {
		m.many[e.id] = e.n
	}
	m.many[id] = n
	m.few = nil
	return nil
}

// del unmaps id, and returns the span it was mapped to (nil: none).
func (m *ctxMap) del(id int64) (old *node) {
	if m.many != nil {
		old = m.many[id]
		delete(m.many, id)
		return old
	}
	for i := range m.few {
		if m.few[i].id == id {
			old = m.few[i].n
			last := len(m.few) - 1
			m.few[i] = m.few[last]
			m.few[last] = ctxEntry{}
			m.few = m.few[:last]
			return old
		}
	}
	return nil
}

// unrefAll says of every span mapped to that an event's ctx no longer
// is it, and empties the map.
func (m *ctxMap) unrefAll(x *execTrace) {
	for _, n := range m.many {
		x.unref(n)
	}
	for _, e := range m.few {
		x.unref(e.n)
	}
	*m = ctxMap{}
}

func (m *ctxMap) len() int { return len(m.few) + len(m.many) }
