package sandbox

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
)

func parseCert(g Gomega, data []byte) *x509.Certificate {
	block, _ := pem.Decode(data)
	g.Expect(block).NotTo(BeNil())
	cert, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	return cert
}

func TestServingCertCoversEveryWayToReachTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	p, err := newPKI(filepath.Join(t.TempDir(), "pki"))
	g.Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	roots.AddCert(p.ca.cert)

	data, err := os.ReadFile(p.path(servingCertFile))
	g.Expect(err).NotTo(HaveOccurred())
	serving := parseCert(g, data)
	for _, host := range []string{"127.0.0.1", "localhost", "::1", inClusterServiceIP, "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		_, err := serving.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		g.Expect(err).NotTo(HaveOccurred(), "serving certificate for %s", host)
	}
}

func TestClientCertCarriesUserAndGroups(t *testing.T) {
	g := NewWithT(t)
	ca, err := newCertificateAuthority("test-ca")
	g.Expect(err).NotTo(HaveOccurred())
	pair, err := ca.newClientCert("alice", []string{"team-a", "team-b"})
	g.Expect(err).NotTo(HaveOccurred())
	cert := parseCert(g, pair.Cert)
	g.Expect(cert.Subject.CommonName).To(Equal("alice"))
	g.Expect(cert.Subject.Organization).To(Equal([]string{"team-a", "team-b"}))
	g.Expect(slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth)).To(BeTrue())

	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred())

	other, err := newCertificateAuthority("other-ca")
	g.Expect(err).NotTo(HaveOccurred())
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(other.cert)
	_, err = cert.Verify(x509.VerifyOptions{Roots: otherRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).To(HaveOccurred(), "another cluster's CA must not accept this certificate")
}
