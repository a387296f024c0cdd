package proxy

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// NFTables talks to the kernel's nf_tables over netlink (no nft binary),
// optionally inside a named network namespace (for tests).
type NFTables struct {
	// Netns, when set, is a name under /var/run/netns.
	Netns string
}

// nftBatchBuffer is the socket buffer asked for: a full sync of 10,000
// Services is one netlink batch of tens of megabytes, and the kernel
// acknowledges every message of it.
const nftBatchBuffer = 256 << 20

// conn opens a netlink connection; close releases the namespace handle.
func (n NFTables) conn() (c *nftables.Conn, closeFn func(), err error) {
	bigBuffers := nftables.WithSockOptions(func(c *netlink.Conn) error {
		raw, err := c.SyscallConn()
		if err != nil {
			return err
		}
		var serr error
		err = raw.Control(func(fd uintptr) {
			for _, o := range []int{unix.SO_SNDBUFFORCE, unix.SO_RCVBUFFORCE} {
				if e := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, o, nftBatchBuffer); e != nil {
					serr = e
				}
			}
		})
		if serr != nil {
			// Without CAP_NET_ADMIN's force, the sysctl maximum.
			_ = c.SetWriteBuffer(nftBatchBuffer)
			_ = c.SetReadBuffer(nftBatchBuffer)
		}
		return err
	})
	if n.Netns == "" {
		c, err = nftables.New(bigBuffers)
		return c, func() {}, err
	}
	f, err := os.Open("/var/run/netns/" + n.Netns)
	if err != nil {
		return nil, nil, err
	}
	c, err = nftables.New(nftables.WithNetNSFd(int(f.Fd())), bigBuffers)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return c, func() { f.Close() }, nil
}

func nftTableRef() *nftables.Table {
	return &nftables.Table{Name: nftTable, Family: nftables.TableFamilyIPv4}
}

// nftState is what the last successful sync wrote: chain bodies, set
// elements and affinity sets, the base of the next partial sync.
type nftState struct {
	chains   map[string]string
	elems    map[string]map[string]nftElem
	affinity map[string]int32
}

// nftWriter applies rulesets in one netlink transaction each.
type nftWriter struct {
	n     NFTables
	table *nftables.Table
	sets  map[string]*nftables.Set
}

func newNFTWriter(n NFTables) *nftWriter {
	w := &nftWriter{n: n, table: nftTableRef(), sets: map[string]*nftables.Set{}}
	for _, d := range nftSetDefs {
		s := &nftables.Set{Table: w.table, Name: d.name, KeyType: d.key, Concatenation: d.concat}
		if d.verdict {
			s.IsMap, s.DataType = true, nftables.TypeVerdict
		}
		w.sets[d.name] = s
	}
	return w
}

func (w *nftWriter) chainRef(c *nftChain) *nftables.Chain {
	ch := &nftables.Chain{Name: c.name, Table: w.table}
	if c.base != nil {
		ch.Type, ch.Hooknum = c.base.typ, c.base.hook
		ch.Priority = nftables.ChainPriorityRef(nftables.ChainPriority(c.base.priority))
	}
	return ch
}

func affinitySetRef(t *nftables.Table, name string, seconds int32) *nftables.Set {
	return &nftables.Set{Table: t, Name: name, KeyType: nftables.TypeIPAddr, Dynamic: true,
		HasTimeout: true, Timeout: time.Duration(seconds) * time.Second}
}

// addRules queues c's rules.
func (w *nftWriter) addRules(cc *nftables.Conn, c *nftChain) {
	ch := &nftables.Chain{Name: c.name, Table: w.table}
	for _, r := range c.rules {
		cc.AddRule(&nftables.Rule{Table: w.table, Chain: ch, Exprs: r.exprs})
	}
}

// nftElemListMax bounds the encoded size of the elements sent in one
// message: their list is one netlink attribute, whose length is 16 bits
// (a longer list wraps around and the kernel reads garbage).
const nftElemListMax = 32 << 10

func setElements(es []nftElem) []nftables.SetElement {
	out := make([]nftables.SetElement, len(es))
	for i, e := range es {
		out[i] = nftables.SetElement{Key: e.key, VerdictData: e.verdict}
	}
	return out
}

// elemSize is an upper bound of an element's encoded size.
func elemSize(e nftables.SetElement) int {
	n := 64 + len(e.Key) + len(e.Val)
	if e.VerdictData != nil {
		n += len(e.VerdictData.Chain)
	}
	return n
}

// addSetElements adds (or deletes) es in messages of at most
// nftElemListMax bytes of elements each.
func addSetElements(cc *nftables.Conn, set *nftables.Set, es []nftables.SetElement, del bool) error {
	for len(es) > 0 {
		n, size := 0, 0
		for n < len(es) && (n == 0 || size+elemSize(es[n]) <= nftElemListMax) {
			size += elemSize(es[n])
			n++
		}
		var err error
		if del {
			err = cc.SetDeleteElements(set, es[:n])
		} else {
			err = cc.SetAddElements(set, es[:n])
		}
		if err != nil {
			return err
		}
		es = es[n:]
	}
	return nil
}

func (w *nftWriter) addElems(cc *nftables.Conn, set string, es []nftElem, del bool) error {
	return addSetElements(cc, w.sets[set], setElements(es), del)
}

// write applies rs in one transaction. With prev nil the table is deleted
// and made anew (a full sync: whatever else is in it goes); otherwise only
// the chains whose rules changed are rewritten and set elements added and
// removed, the rest (and the affinity sets' entries) left alone.
func (w *nftWriter) write(rs *nftRuleset, prev *nftState) (*nftState, error) {
	cc, closeFn, err := w.n.conn()
	if err != nil {
		return nil, fmt.Errorf("nftables: %w", err)
	}
	defer closeFn()
	next := &nftState{chains: map[string]string{}, elems: rs.elems, affinity: rs.affinity}
	for _, name := range rs.order {
		next.chains[name] = rs.chains[name].body()
	}

	if prev == nil {
		cc.AddTable(w.table)
		cc.DelTable(w.table)
		cc.AddTable(w.table)
		for _, name := range rs.order {
			cc.AddChain(w.chainRef(rs.chains[name]))
		}
		for _, d := range nftSetDefs {
			if err := cc.AddSet(w.sets[d.name], nil); err != nil {
				return nil, err
			}
		}
		for s, secs := range rs.affinity {
			if err := cc.AddSet(affinitySetRef(w.table, s, secs), nil); err != nil {
				return nil, err
			}
		}
		for _, name := range rs.order {
			w.addRules(cc, rs.chains[name])
		}
		for _, d := range nftSetDefs {
			es := make([]nftElem, 0, len(rs.elems[d.name]))
			for _, e := range rs.elems[d.name] {
				es = append(es, e)
			}
			if err := w.addElems(cc, d.name, es, false); err != nil {
				return nil, err
			}
		}
		if err := cc.Flush(); err != nil {
			return nil, fmt.Errorf("nftables: writing table %s: %w", nftTable, err)
		}
		return next, nil
	}

	// Partial: new chains and sets first, then elements that go away (they
	// may name chains about to go), the changed chains, new elements, and
	// last the chains and sets nothing refers to any more.
	var changed, gone []string
	for _, name := range rs.order {
		old, ok := prev.chains[name]
		if !ok {
			cc.AddChain(w.chainRef(rs.chains[name]))
			changed = append(changed, name)
		} else if old != next.chains[name] {
			changed = append(changed, name)
		}
	}
	for name := range prev.chains {
		if _, ok := next.chains[name]; !ok {
			gone = append(gone, name)
		}
	}
	for s, secs := range rs.affinity {
		if _, ok := prev.affinity[s]; !ok {
			if err := cc.AddSet(affinitySetRef(w.table, s, secs), nil); err != nil {
				return nil, err
			}
		}
	}
	for _, d := range nftSetDefs {
		var del []nftElem
		for k, e := range prev.elems[d.name] {
			if n, ok := rs.elems[d.name][k]; !ok || n.text != e.text {
				del = append(del, e)
			}
		}
		if err := w.addElems(cc, d.name, del, true); err != nil {
			return nil, err
		}
	}
	for _, name := range changed {
		if _, existed := prev.chains[name]; existed {
			cc.FlushChain(&nftables.Chain{Name: name, Table: w.table})
		}
	}
	for _, name := range gone {
		cc.FlushChain(&nftables.Chain{Name: name, Table: w.table})
	}
	for _, name := range changed {
		w.addRules(cc, rs.chains[name])
	}
	for _, d := range nftSetDefs {
		var add []nftElem
		for k, e := range rs.elems[d.name] {
			if o, ok := prev.elems[d.name][k]; !ok || o.text != e.text {
				add = append(add, e)
			}
		}
		if err := w.addElems(cc, d.name, add, false); err != nil {
			return nil, err
		}
	}
	for _, name := range gone {
		cc.DelChain(&nftables.Chain{Name: name, Table: w.table})
	}
	for s, secs := range prev.affinity {
		if _, ok := rs.affinity[s]; !ok {
			cc.DelSet(affinitySetRef(w.table, s, secs))
		}
	}
	if err := cc.Flush(); err != nil {
		return nil, fmt.Errorf("nftables: updating table %s: %w", nftTable, err)
	}
	return next, nil
}

// CleanupNFTables deletes the nftables mode's table, if there is one.
func CleanupNFTables(n NFTables) error {
	cc, closeFn, err := n.conn()
	if err != nil {
		return err
	}
	defer closeFn()
	t := nftTableRef()
	cc.AddTable(t)
	cc.DelTable(t)
	if err := cc.Flush(); err != nil {
		if errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.EPROTONOSUPPORT) {
			return nil // no nf_tables in this kernel: nothing to remove
		}
		return fmt.Errorf("nftables: deleting table %s: %w", nftTable, err)
	}
	return nil
}
