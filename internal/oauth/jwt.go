package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// signer signs the JWTs driftd makes: private_key_jwt client assertions
// (RFC 7523 §2.2) and DPoP proofs (RFC 9449 §4.2).
type signer struct {
	key    crypto.Signer
	method jwt.SigningMethod
}

// parseKey reads a PEM private key (PKCS#8, SEC 1 or PKCS#1) and the
// algorithm to sign with: alg when set, which must fit the key; else ES256
// for a P-256 key, RS256 for an RSA one.
func parseKey(pem []byte, alg string) (*signer, error) {
	if k, err := jwt.ParseECPrivateKeyFromPEM(pem); err == nil {
		if k.Curve != elliptic.P256() {
			return nil, errors.New("an EC key must be on P-256 (ES256)")
		}
		if alg != "" && alg != "ES256" {
			return nil, fmt.Errorf("signing_algorithm %s does not fit an EC P-256 key", alg)
		}
		return &signer{k, jwt.SigningMethodES256}, nil
	}
	if k, err := jwt.ParseRSAPrivateKeyFromPEM(pem); err == nil {
		if k.N.BitLen() < 2048 {
			return nil, errors.New("an RSA key must have at least 2048 bits")
		}
		if alg != "" && alg != "RS256" {
			return nil, fmt.Errorf("signing_algorithm %s does not fit an RSA key", alg)
		}
		return &signer{k, jwt.SigningMethodRS256}, nil
	}
	return nil, errors.New("not a PEM EC P-256 or RSA private key")
}

// newDPoPKey makes the process's DPoP key: ES256, in memory only.
func newDPoPKey() (*signer, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &signer{k, jwt.SigningMethodES256}, nil
}

// sign signs claims with header fields extra added.
func (s *signer) sign(claims jwt.MapClaims, extra map[string]any) (string, error) {
	t := jwt.NewWithClaims(s.method, claims)
	for k, v := range extra {
		t.Header[k] = v
	}
	return t.SignedString(s.key)
}

// jti is a fresh JWT ID.
func jti() string {
	return rand.Text()
}

// clientAssertion is a private_key_jwt assertion for clientID to the
// authorization server audience (its issuer, or its token endpoint when
// no issuer is known), valid for a minute.
func (s *signer) clientAssertion(clientID, audience string, now time.Time) (string, error) {
	return s.sign(jwt.MapClaims{
		"iss": clientID, "sub": clientID, "aud": audience, "jti": jti(),
		"iat": now.Unix(), "exp": now.Add(time.Minute).Unix(),
	}, nil)
}

// publicJWK is the public half of the key as a JWK (RFC 7517).
func (s *signer) publicJWK() map[string]any {
	b64 := base64.RawURLEncoding.EncodeToString
	switch k := s.key.Public().(type) {
	case *ecdsa.PublicKey:
		pk, _ := k.ECDH() // P-256 always converts
		raw := pk.Bytes() // 0x04 || X || Y
		return map[string]any{"kty": "EC", "crv": "P-256", "x": b64(raw[1:33]), "y": b64(raw[33:])}
	case *rsa.PublicKey:
		e := []byte{byte(k.E >> 16), byte(k.E >> 8), byte(k.E)}
		for len(e) > 1 && e[0] == 0 {
			e = e[1:]
		}
		return map[string]any{"kty": "RSA", "n": b64(k.N.Bytes()), "e": b64(e)}
	}
	return nil
}

// proof is a DPoP proof (RFC 9449 §4.2) for a request of method to
// target (query and fragment dropped, §4.2 htu), with the server's nonce
// when one was given and, on a resource request, the access token's hash.
func (s *signer) proof(method string, target *url.URL, nonce, accessToken string, now time.Time) (string, error) {
	htu := url.URL{Scheme: target.Scheme, Host: target.Host, Path: target.Path, RawPath: target.RawPath}
	claims := jwt.MapClaims{"jti": jti(), "htm": method, "htu": htu.String(), "iat": now.Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return s.sign(claims, map[string]any{"typ": "dpop+jwt", "jwk": s.publicJWK()})
}
