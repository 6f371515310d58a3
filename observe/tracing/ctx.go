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

func (m *ctxMap) set(id int64, n *node) {
	if m.many != nil {
		m.many[id] = n
		return
	}
	for i := range m.few {
		if m.few[i].id == id {
			m.few[i].n = n
			return
		}
	}
	if len(m.few) < maxFew {
		if m.few == nil {
			m.few = m.buf[:0]
		}
		m.few = append(m.few, ctxEntry{id, n})
		return
	}
	m.many = make(map[int64]*node, 2*maxFew)
	for _, e := range m.few {
		m.many[e.id] = e.n
	}
	m.many[id] = n
	m.few = nil
}

func (m *ctxMap) del(id int64) {
	if m.many != nil {
		delete(m.many, id)
		return
	}
	for i := range m.few {
		if m.few[i].id == id {
			last := len(m.few) - 1
			m.few[i] = m.few[last]
			m.few[last] = ctxEntry{}
			m.few = m.few[:last]
			return
		}
	}
}

func (m *ctxMap) len() int { return len(m.few) + len(m.many) }
