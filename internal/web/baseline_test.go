package web

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// TestAcceptPassesTheVerifiedCertificateSubject: an accept over TLS with
// a client certificate the handshake verified carries its subject to the
// Source, which records it as the identity; the body's by stays a claim.
func TestAcceptPassesTheVerifiedCertificateSubject(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "alice", Organization: []string{"ops"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)

	src := &fakeSource{ready: true}
	srv := httptest.NewUnstartedServer(New(src, Options{EnableLifecycle: true, Metrics: promhttp.HandlerFor(prometheus.NewRegistry(), promhttp.HandlerOpts{})}))
	srv.TLS = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/targets/tofu/baseline", strings.NewReader(`{"digest":"`+tofuDigest+`","by":"mallory"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(RequestHeader, "1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || len(src.acceptReqs) != 1 {
		t.Fatalf("accept: %d, %d requests", resp.StatusCode, len(src.acceptReqs))
	}
	if req := src.acceptReqs[0]; req.CertSubject != "CN=alice,O=ops" || req.ClaimedBy != "mallory" {
		t.Fatalf("subject %q, claimed %q", req.CertSubject, req.ClaimedBy)
	}
}
