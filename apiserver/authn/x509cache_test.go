package authn

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/pki"
)

// countingX509 is an X509 over pool whose clock is *now and which counts
// its chain verifications.
func countingX509(pool *x509.CertPool, now *time.Time) (*X509, *atomic.Int32) {
	var n atomic.Int32
	a := NewX509(pool)
	a.now = func() time.Time { return *now }
	a.verify = func(leaf *x509.Certificate, opts x509.VerifyOptions) ([][]*x509.Certificate, error) {
		n.Add(1)
		return leaf.Verify(opts)
	}
	return a, &n
}

func clientCert(t testing.TB, ca *pki.CA, user string, validity time.Duration) *x509.Certificate {
	t.Helper()
	p, _, err := ca.IssueClient(user, []string{"dev"}, validity)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pki.ParseCertPEM(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func certRequest(certs ...*x509.Certificate) *http.Request {
	r := httptest.NewRequest("GET", "https://x/", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: certs}
	return r
}

// authnAs authenticates r with a and wants user, or an error containing
// wantErr when it is not empty.
func authnAs(t *testing.T, a *X509, r *http.Request, user, wantErr string) {
	t.Helper()
	u, ok, err := a.AuthenticateRequest(r)
	if wantErr != "" {
		if err == nil || ok || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("ok=%v err=%v, want an error with %q", ok, err, wantErr)
		}
		return
	}
	if err != nil || !ok || u.Name != user {
		t.Fatalf("user %+v ok=%v err=%v, want %s", u, ok, err, user)
	}
}

func wantVerifications(t *testing.T, n *atomic.Int32, want int32) {
	t.Helper()
	if got := n.Load(); got != want {
		t.Fatalf("%d verifications, want %d", got, want)
	}
}

func newTestCA(t testing.TB) *pki.CA {
	t.Helper()
	ca, err := pki.NewCA("kubernetes", 0)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestX509CacheReusesVerification(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	alice := clientCert(t, ca, "alice", time.Hour)
	now := time.Now()
	a, n := countingX509(ca.Pool(), &now)
	for range 3 {
		authnAs(t, a, certRequest(alice), "alice", "")
	}
	wantVerifications(t, n, 1)

	// The TTL bounds a success even when the certificate lives longer.
	now = now.Add(verifiedChainTTL)
	authnAs(t, a, certRequest(alice), "alice", "")
	wantVerifications(t, n, 2)
	authnAs(t, a, certRequest(alice), "alice", "")
	wantVerifications(t, n, 2)
}

func TestX509CacheHonoursNotAfter(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	// Expires within the TTL: the certificate's end, not the TTL, ends
	// the cached success.
	short := clientCert(t, ca, "alice", time.Minute)
	if short.NotAfter.Sub(time.Now()) >= verifiedChainTTL {
		t.Fatalf("NotAfter %s is not within the TTL", short.NotAfter)
	}
	now := time.Now()
	a, n := countingX509(ca.Pool(), &now)
	authnAs(t, a, certRequest(short), "alice", "")
	now = short.NotAfter // still valid: NotAfter is inclusive
	authnAs(t, a, certRequest(short), "alice", "")
	wantVerifications(t, n, 1)

	now = short.NotAfter.Add(time.Nanosecond)
	authnAs(t, a, certRequest(short), "", "expired")
	wantVerifications(t, n, 2)
	// The clock going back (an injected one may) is not a reason to trust
	// a dropped entry either: it verifies again.
	now = short.NotBefore.Add(-time.Second)
	authnAs(t, a, certRequest(short), "", "not yet valid")
}

func TestX509CacheIsPerPool(t *testing.T) {
	t.Parallel()
	ca, rogue := newTestCA(t), newTestCA(t)
	alice := clientCert(t, ca, "alice", time.Hour)
	now := time.Now()
	a, n := countingX509(ca.Pool(), &now)
	authnAs(t, a, certRequest(alice), "alice", "")
	authnAs(t, a, certRequest(alice), "alice", "")
	wantVerifications(t, n, 1)

	// A reloaded bundle is a new pool: its answer is its own, even with
	// the same CA in it.
	a.pool = ca.Pool()
	authnAs(t, a, certRequest(alice), "alice", "")
	wantVerifications(t, n, 2)
	// A bundle without the issuing CA refuses the cached chain.
	a.pool = rogue.Pool()
	authnAs(t, a, certRequest(alice), "", "certificate signed by unknown authority")
	wantVerifications(t, n, 3)
}

func TestX509CacheKeysTheWholeChain(t *testing.T) {
	t.Parallel()
	ca, other := newTestCA(t), newTestCA(t)
	alice := clientCert(t, ca, "alice", time.Hour)
	now := time.Now()
	a, n := countingX509(ca.Pool(), &now)
	authnAs(t, a, certRequest(alice), "alice", "")
	wantVerifications(t, n, 1)

	// Another certificate for the same subject from the same CA.
	alice2 := clientCert(t, ca, "alice", time.Hour)
	authnAs(t, a, certRequest(alice2), "alice", "")
	wantVerifications(t, n, 2)

	// The same leaf with an intermediate after it is another chain.
	authnAs(t, a, certRequest(alice, other.Cert), "alice", "")
	wantVerifications(t, n, 3)

	// The cached leaf with its signature tampered with: same subject,
	// serial and issuer, different DER.
	raw := append([]byte(nil), alice.Raw...)
	raw[len(raw)-1] ^= 0x01
	tampered, err := x509.ParseCertificate(raw)
	if err != nil {
		t.Fatal(err)
	}
	if tampered.Subject.String() != alice.Subject.String() || tampered.SerialNumber.Cmp(alice.SerialNumber) != 0 {
		t.Fatal("the tampered certificate should name the same subject and serial")
	}
	authnAs(t, a, certRequest(tampered), "", "verifying certificate")
	wantVerifications(t, n, 4)
}

func TestX509CacheDoesNotKeepFailures(t *testing.T) {
	t.Parallel()
	ca, rogue := newTestCA(t), newTestCA(t)
	foreign := clientCert(t, rogue, "alice", time.Hour)
	now := time.Now()
	a, n := countingX509(ca.Pool(), &now)
	for range 2 {
		authnAs(t, a, certRequest(foreign), "", "certificate signed by unknown authority")
	}
	wantVerifications(t, n, 2)
	if l := a.cache.len(); l != 0 {
		t.Fatalf("%d cached chains after failures, want 0", l)
	}
}

func TestX509CacheIsBounded(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	now := time.Now()
	a, n := countingX509(ca.Pool(), &now)
	a.cache.max = 3
	certs := make([]*x509.Certificate, 5)
	for i := range certs {
		certs[i] = clientCert(t, ca, fmt.Sprintf("user-%d", i), time.Hour)
		authnAs(t, a, certRequest(certs[i]), certs[i].Subject.CommonName, "")
		if l := a.cache.len(); l > 3 {
			t.Fatalf("%d cached chains, want at most 3", l)
		}
	}
	wantVerifications(t, n, 5)
	// The most recent are remembered, the oldest evicted.
	authnAs(t, a, certRequest(certs[4]), "user-4", "")
	wantVerifications(t, n, 5)
	authnAs(t, a, certRequest(certs[0]), "user-0", "")
	wantVerifications(t, n, 6)
	if l := a.cache.len(); l != 3 {
		t.Fatalf("%d cached chains, want 3", l)
	}
}

func TestX509CacheConcurrent(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	certs := []*x509.Certificate{clientCert(t, ca, "a", time.Hour), clientCert(t, ca, "b", time.Hour), clientCert(t, ca, "c", time.Hour)}
	a := NewX509(ca.Pool())
	a.cache.max = 2 // evictions race with hits
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				c := certs[(g+i)%len(certs)]
				u, ok, err := a.AuthenticateRequest(certRequest(c))
				if err != nil || !ok || u.Name != c.Subject.CommonName {
					t.Errorf("user %+v ok=%v err=%v, want %s", u, ok, err, c.Subject.CommonName)
					return
				}
			}
		})
	}
	wg.Wait()
}
