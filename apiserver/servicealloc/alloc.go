package servicealloc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/minik8s/minik8s/api"

	"github.com/minik8s/minik8s/apiserver/storage"
)

// Key prefixes under the storage prefix ("/registry/").
const (
	ipPrefix   = "ipaddresses/"
	portPrefix = "servicenodeports/"
)

// Errors callers turn into field errors with Kubernetes' wording.
var (
	ErrAllocated = errors.New("provided IP is already allocated")
	ErrFull      = errors.New("range is full")
)

// NotInRangeError is a requested value outside the configured range.
type NotInRangeError struct{ msg string }

func (e *NotInRangeError) Error() string { return e.msg }

// ErrPortAllocated is a requested NodePort already taken.
var ErrPortAllocated = errors.New("provided port is already allocated")

// Owner identifies the Service an allocation belongs to.
type Owner struct {
	Namespace, Name string
	UID             string
}

// record is who holds an allocation and since when.
type record struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       string    `json:"uid"`
	Allocated time.Time `json:"allocated"`
}

// ownerUIDAnnotation keeps the Service's UID on its IPAddress (Kubernetes'
// parentRef has no uid).
const ownerUIDAnnotation = "ipaddress.minik8s.io/service-uid"

// encodeRecord is the value stored under an allocation key. A ClusterIP's
// is the networking.k8s.io/v1 IPAddress kube-apiserver's allocator writes
// under the same key, which the IPAddress API serves: named by the IP,
// labelled by the allocator, its parentRef the Service. A NodePort's is
// the record itself.
func encodeRecord(key string, r record) []byte {
	ip, ok := strings.CutPrefix(key, ipPrefix)
	if !ok {
		b, _ := json.Marshal(r)
		return b
	}
	b, _ := json.Marshal(&api.IPAddress{
		TypeMeta: api.TypeMeta{Kind: "IPAddress", APIVersion: "networking.k8s.io/v1"},
		ObjectMeta: api.ObjectMeta{Name: ip, UID: api.UID(uuid.NewString()), CreationTimestamp: api.NewTime(r.Allocated),
			Labels: map[string]string{
				"ipaddress.kubernetes.io/ip-family":  "IPv4",
				"ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
			},
			Annotations: map[string]string{ownerUIDAnnotation: r.UID}},
		Spec: api.IPAddressSpec{ParentRef: &api.ParentReference{Resource: "services", Namespace: r.Namespace, Name: r.Name}},
	})
	return b
}

// Allocator allocates ClusterIPs and NodePorts. It is safe for concurrent
// use, also across apiservers sharing one etcd.
type Allocator struct {
	st       *storage.Store
	cidr     *net.IPNet
	base     uint32 // the network address as a number
	size     uint32 // addresses in the range, network and broadcast included
	portLo   int
	portHi   int
	now      func() time.Time
	randIntN func(int) int
}

// New returns an allocator over serviceCIDR (IPv4, at most /8 wide, at
// least /28) and the NodePort range "30000-32767".
func New(st *storage.Store, serviceCIDR, portRange string) (*Allocator, error) {
	_, cidr, err := net.ParseCIDR(serviceCIDR)
	if err != nil {
		return nil, fmt.Errorf("--service-cluster-ip-range: %w", err)
	}
	ip4 := cidr.IP.To4()
	if ip4 == nil {
		return nil, fmt.Errorf("--service-cluster-ip-range %s: only IPv4 is supported", serviceCIDR)
	}
	ones, bits := cidr.Mask.Size()
	if bits-ones > 24 || bits-ones < 4 {
		return nil, fmt.Errorf("--service-cluster-ip-range %s: the prefix length must be between /8 and /28", serviceCIDR)
	}
	lo, hi, err := ParsePortRange(portRange)
	if err != nil {
		return nil, err
	}
	return &Allocator{
		st: st, cidr: cidr,
		base: binary.BigEndian.Uint32(ip4), size: 1 << (bits - ones),
		portLo: lo, portHi: hi,
		now:      time.Now,
		randIntN: rand.IntN,
	}, nil
}

// ParsePortRange parses kube's "30000-32767" (or a single port).
func ParsePortRange(s string) (lo, hi int, err error) {
	a, b, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("--service-node-port-range %q: want FROM-TO within 1-65535", s)
	}
	return lo, hi, nil
}

// CIDR is the service range.
func (a *Allocator) CIDR() *net.IPNet { return a.cidr }

// PortRange is the NodePort range as kube prints it, "30000-32767".
func (a *Allocator) PortRange() string { return fmt.Sprintf("%d-%d", a.portLo, a.portHi) }

// FirstIP is the range's first usable address: the "kubernetes" Service's.
func (a *Allocator) FirstIP() net.IP { return a.ipAt(1) }

func (a *Allocator) ipAt(offset uint32) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, a.base+offset)
	return ip
}

func (a *Allocator) offsetOf(ip net.IP) (uint32, bool) {
	ip4 := ip.To4()
	if ip4 == nil || !a.cidr.Contains(ip4) {
		return 0, false
	}
	off := binary.BigEndian.Uint32(ip4) - a.base
	// The network and broadcast addresses are never handed out.
	return off, off > 0 && off < a.size-1
}

// AllocateIP reserves ip for owner, or any free address when ip is nil.
// With dryRun nothing is written; the answer says whether it would succeed.
func (a *Allocator) AllocateIP(ctx context.Context, ip net.IP, owner Owner, dryRun bool) (net.IP, error) {
	if ip != nil {
		if _, ok := a.offsetOf(ip); !ok {
			return nil, &NotInRangeError{fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ip, a.cidr)}
		}
		if _, err := a.claim(ctx, ipPrefix+ip.String(), owner, dryRun); err != nil {
			if errors.Is(err, storage.ErrKeyExists) {
				return nil, ErrAllocated
			}
			return nil, err
		}
		return ip, nil
	}
	used, err := a.used(ctx, ipPrefix)
	if err != nil {
		return nil, err
	}
	usable := int(a.size) - 2
	// Like Kubernetes, dynamic allocation prefers the upper part of the
	// range, leaving the lower band for addresses users ask for.
	band := min(max(16, usable/16), 256)
	if band >= usable {
		band = 0
	}
	for _, span := range [][2]int{{band, usable}, {0, band}} {
		n := span[1] - span[0]
		if n <= 0 {
			continue
		}
		start := a.randIntN(n)
		for i := 0; i < n; i++ {
			off := uint32(1 + span[0] + (start+i)%n)
			cand := a.ipAt(off)
			if used[cand.String()] {
				continue
			}
			_, err := a.claim(ctx, ipPrefix+cand.String(), owner, dryRun)
			if errors.Is(err, storage.ErrKeyExists) {
				continue // taken since the list
			}
			if err != nil {
				return nil, err
			}
			return cand, nil
		}
	}
	return nil, ErrFull
}

// AllocatePort reserves port for owner, or any free port when port is 0.
func (a *Allocator) AllocatePort(ctx context.Context, port int, owner Owner, dryRun bool) (int, error) {
	if port != 0 {
		if port < a.portLo || port > a.portHi {
			return 0, &NotInRangeError{fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", a.PortRange())}
		}
		if _, err := a.claim(ctx, portPrefix+strconv.Itoa(port), owner, dryRun); err != nil {
			if errors.Is(err, storage.ErrKeyExists) {
				return 0, ErrPortAllocated
			}
			return 0, err
		}
		return port, nil
	}
	used, err := a.used(ctx, portPrefix)
	if err != nil {
		return 0, err
	}
	n := a.portHi - a.portLo + 1
	start := a.randIntN(n)
	for i := 0; i < n; i++ {
		cand := a.portLo + (start+i)%n
		if used[strconv.Itoa(cand)] {
			continue
		}
		_, err := a.claim(ctx, portPrefix+strconv.Itoa(cand), owner, dryRun)
		if errors.Is(err, storage.ErrKeyExists) {
			continue
		}
		if err != nil {
			return 0, err
		}
		return cand, nil
	}
	return 0, ErrFull
}

// claim creates key for owner and reports whether it wrote it. A key
// already held by the same owner (same UID) counts as claimed:
// re-allocating what one already has is a no-op.
func (a *Allocator) claim(ctx context.Context, key string, owner Owner, dryRun bool) (bool, error) {
	if dryRun {
		kv, err := a.st.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if r, ok := decode(kv.Value); ok && r.UID == owner.UID {
			return false, nil
		}
		return false, storage.ErrKeyExists
	}
	val := encodeRecord(key, record{Namespace: owner.Namespace, Name: owner.Name, UID: owner.UID, Allocated: a.now().UTC()})
	_, err := a.st.Create(ctx, key, val)
	if errors.Is(err, storage.ErrKeyExists) {
		kv, gerr := a.st.Get(ctx, key)
		if gerr == nil {
			if r, ok := decode(kv.Value); ok && r.UID == owner.UID {
				return false, nil
			}
		}
	}
	return err == nil, err
}

// decode reads a stored allocation: an IPAddress, or a record (NodePorts,
// and ClusterIPs allocated before IPAddresses were served).
func decode(b []byte) (record, bool) {
	var r record
	if json.Unmarshal(b, &r) != nil {
		return r, false
	}
	if r.UID != "" {
		return r, true
	}
	var ip api.IPAddress
	if json.Unmarshal(b, &ip) != nil || ip.Spec.ParentRef == nil {
		return r, false
	}
	return record{Namespace: ip.Spec.ParentRef.Namespace, Name: ip.Spec.ParentRef.Name,
		UID: ip.Annotations[ownerUIDAnnotation], Allocated: ip.CreationTimestamp.Time}, true
}

// used lists the allocated values under prefix.
func (a *Allocator) used(ctx context.Context, prefix string) (map[string]bool, error) {
	res, err := a.st.List(ctx, prefix, storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(res.KVs))
	for _, kv := range res.KVs {
		out[strings.TrimPrefix(kv.Key, prefix)] = true
	}
	return out, nil
}

// ReleaseIP frees ip if owner holds it.
func (a *Allocator) ReleaseIP(ctx context.Context, ip string, uid string) error {
	return a.release(ctx, ipPrefix+ip, uid)
}

// ReleasePort frees port if owner holds it.
func (a *Allocator) ReleasePort(ctx context.Context, port int, uid string) error {
	return a.release(ctx, portPrefix+strconv.Itoa(port), uid)
}

func (a *Allocator) release(ctx context.Context, key, uid string) error {
	kv, err := a.st.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r, ok := decode(kv.Value); ok && uid != "" && r.UID != uid {
		return nil // someone else's since
	}
	_, _, err = a.st.Delete(ctx, key, kv.ModRevision)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	var conflict *storage.ConflictError
	if errors.As(err, &conflict) {
		return nil // re-allocated meanwhile: not ours to free
	}
	return err
}
