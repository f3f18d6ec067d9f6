package oauth

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/driftd/driftd/internal/atomicfile"
)

// SessionVersion is the session file format driftd writes.
const SessionVersion = 1

// maxSessionFile bounds a session file.
const maxSessionFile = 256 << 10

// Session is a person's authorization for one MCP endpoint, as `driftd
// auth login` leaves it and the daemon keeps it: the client it was
// registered as, the refresh token (and the last access token), and the
// DPoP key the tokens are bound to. It lives in a file of mode 0600, and
// nowhere else: never in state, a report, a log or a page.
type Session struct {
	Version int `json:"version"`
	// Endpoint is the MCP endpoint logged into; Resource the protected
	// resource metadata's resource the tokens are for.
	Endpoint string `json:"endpoint"`
	Resource string `json:"resource"`
	// Issuer, TokenEndpoint and RevocationEndpoint are the authorization
	// server's.
	Issuer             string `json:"issuer"`
	TokenEndpoint      string `json:"token_endpoint"`
	RevocationEndpoint string `json:"revocation_endpoint,omitempty"`
	// Registration is how the client came to be: pre-registered,
	// client_id_metadata_document or dynamic (RFC 7591).
	Registration string `json:"registration"`
	ClientID     string `json:"client_id"`
	// ClientSecret is one dynamic registration issued (a pre-registered
	// client's stays in its configured file).
	ClientSecret string `json:"client_secret,omitempty"`
	// ClientAuth is the token endpoint authentication method.
	ClientAuth string   `json:"client_auth"`
	Scopes     []string `json:"scopes,omitempty"`
	// RefreshToken is empty when the authorization server issued none:
	// the session then ends with its access token.
	RefreshToken string    `json:"refresh_token,omitempty"`
	AccessToken  string    `json:"access_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// DPoPKey is the PKCS #8 PEM key the tokens are bound to (RFC 9449),
	// empty when they are not.
	DPoPKey    string    `json:"dpop_key,omitempty"`
	LoggedInAt time.Time `json:"logged_in_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// ErrNoSession is returned by LoadSession when neither file exists.
var ErrNoSession = errors.New("no session")

// LoadSession reads the newer of a target's session files: the one the
// operator provides (provided, "" for none: a mounted Secret, read only)
// and driftd's own copy (own), which refreshes write.
func LoadSession(provided, own string) (*Session, error) {
	var best *Session
	var errs []error
	for i, path := range []string{own, provided} {
		if path == "" || (i == 1 && path == own) {
			continue // check's --oauth.session-file is both
		}
		s, err := readSession(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		case best == nil || s.UpdatedAt.After(best.UpdatedAt):
			best = s
		}
	}
	if best != nil {
		return best, nil
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return nil, ErrNoSession
}

func readSession(path string) (*Session, error) {
	b, err := atomicfile.ReadFile(path, maxSessionFile)
	if err != nil {
		return nil, err
	}
	var s Session
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("session file %s is not a driftd session", path)
	}
	if s.Version != SessionVersion {
		return nil, fmt.Errorf("session file %s has version %d; this driftd reads %d", path, s.Version, SessionVersion)
	}
	if s.ClientID == "" || s.TokenEndpoint == "" || s.Resource == "" {
		return nil, fmt.Errorf("session file %s lacks its client, token endpoint or resource", path)
	}
	return &s, nil
}

// Save writes the session to path with mode 0600, its directory made
// with mode 0700.
func (s *Session) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// dpopSigner returns the session's DPoP key, nil when it has none.
func (s *Session) dpopSigner() (*signer, error) {
	if s.DPoPKey == "" {
		return nil, nil
	}
	return parseKey([]byte(s.DPoPKey), "ES256")
}

// encodeKey is a signer's private key as PKCS #8 PEM.
func encodeKey(k *signer) (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// Secrets are the session's values a run redacts.
func (s *Session) Secrets() []string {
	var out []string
	for _, v := range []string{s.RefreshToken, s.AccessToken, s.ClientSecret} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
