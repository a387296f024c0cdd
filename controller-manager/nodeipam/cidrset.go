package nodeipam

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// ErrCIDRRangeFull is returned when every block of the cluster CIDR is taken.
var ErrCIDRRangeFull = errors.New("CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range")

// CIDRSet hands out the /maskSize blocks of an IPv4 cluster CIDR, the way
// kube's cidrset does: round-robin from the last allocation, so a block
// just released is not reused at once. It is not safe for concurrent use.
type CIDRSet struct {
	cluster  netip.Prefix
	maskSize int
	used     []bool
	count    int
	next     int
}

// NewCIDRSet returns the set of blocks of cluster (IPv4) of size maskSize.
func NewCIDRSet(cluster string, maskSize int) (*CIDRSet, error) {
	p, err := netip.ParsePrefix(cluster)
	if err != nil {
		return nil, fmt.Errorf("cluster CIDR %q: %w", cluster, err)
	}
	p = p.Masked()
	if !p.Addr().Is4() {
		return nil, fmt.Errorf("cluster CIDR %q: only IPv4 is supported", cluster)
	}
	if maskSize < p.Bits() || maskSize > 32 {
		return nil, fmt.Errorf("node CIDR mask size %d must be between the cluster CIDR's %d and 32", maskSize, p.Bits())
	}
	if maskSize-p.Bits() > 20 {
		return nil, fmt.Errorf("node CIDR mask size %d is more than 20 bits longer than the cluster CIDR's %d", maskSize, p.Bits())
	}
	return &CIDRSet{cluster: p, maskSize: maskSize, used: make([]bool, 1<<(maskSize-p.Bits()))}, nil
}

// Size is the number of blocks.
func (s *CIDRSet) Size() int { return len(s.used) }

// Used is the number of blocks taken.
func (s *CIDRSet) Used() int { return s.count }

func (s *CIDRSet) block(i int) netip.Prefix {
	base := binary.BigEndian.Uint32(s.cluster.Addr().AsSlice())
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], base+uint32(i)<<(32-s.maskSize))
	return netip.PrefixFrom(netip.AddrFrom4(b), s.maskSize)
}

// index returns the block index of cidr, which must be exactly one block.
func (s *CIDRSet) index(cidr string) (int, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return 0, err
	}
	if p.Bits() != s.maskSize || !s.cluster.Contains(p.Addr()) || p.Masked() != p {
		return 0, fmt.Errorf("%s is not a /%d block of %s", cidr, s.maskSize, s.cluster)
	}
	a := binary.BigEndian.Uint32(p.Addr().AsSlice())
	base := binary.BigEndian.Uint32(s.cluster.Addr().AsSlice())
	return int((a - base) >> (32 - s.maskSize)), nil
}

// AllocateNext takes the next free block.
func (s *CIDRSet) AllocateNext() (string, error) {
	if s.count == len(s.used) {
		return "", ErrCIDRRangeFull
	}
	for i := range s.used {
		j := (s.next + i) % len(s.used)
		if !s.used[j] {
			s.used[j] = true
			s.count++
			s.next = (j + 1) % len(s.used)
			return s.block(j).String(), nil
		}
	}
	return "", ErrCIDRRangeFull
}

// Occupy marks cidr taken (a node's existing podCIDR).
func (s *CIDRSet) Occupy(cidr string) error {
	i, err := s.index(cidr)
	if err != nil {
		return err
	}
	if !s.used[i] {
		s.used[i] = true
		s.count++
	}
	return nil
}

// Release frees cidr.
func (s *CIDRSet) Release(cidr string) error {
	i, err := s.index(cidr)
	if err != nil {
		return err
	}
	if s.used[i] {
		s.used[i] = false
		s.count--
	}
	return nil
}
