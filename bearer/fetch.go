package bearer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/wellknown"
)

// DefaultTimeout bounds each request to the authorization server
// (metadata, keys, introspection) made with the default HTTP client.
const DefaultTimeout = 10 * time.Second

// maxDocumentSize bounds a document read from the authorization server:
// its metadata, its key set, an introspection response. Real ones are a
// few KiB.
const maxDocumentSize = 1 << 20

// defaultClient is the HTTP client of a verifier whose config names none.
func defaultClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: DefaultTimeout}
}

// checkServerURL checks a URL of the authorization server: absolute,
// https (or http on a loopback host, for a server on this machine), no
// fragment. what names it in the error.
func checkServerURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s %q is not a URL: %w", what, raw, err)
	case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return nil, fmt.Errorf("%s %q is not an absolute http(s) URL: give it whole, such as https://auth.example.com", what, raw)
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return nil, fmt.Errorf("%s %q uses http: use https (http is allowed only on a loopback host)", what, raw)
	case u.Fragment != "":
		return nil, fmt.Errorf("%s %q has a fragment: remove it", what, raw)
	}
	return u, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// serverMetadata is what a verifier reads of the authorization server's
// metadata (RFC 8414; OpenID Connect Discovery has the same names).
type serverMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// discover fetches the metadata of issuer, trying each well-known URL in
// turn, and checks that it names the same issuer (RFC 8414 section 3.3).
func discover(ctx context.Context, client *http.Client, issuer string) (*serverMetadata, error) {
	u, err := checkServerURL("issuer", issuer)
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("issuer %q has a query: an issuer has none (RFC 8414)", issuer)
	}
	var tried []string
	for _, mu := range wellknown.AuthorizationServer(u) {
		var md serverMetadata
		status, err := getJSON(ctx, client, mu, &md)
		if status == http.StatusNotFound {
			tried = append(tried, mu)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata: %w", err)
		}
		if md.Issuer != issuer {
			return nil, fmt.Errorf("authorization server metadata at %s names issuer %q, not %q: give the issuer exactly as the server names itself", mu, md.Issuer, issuer)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("no authorization server metadata for issuer %s (tried %s): check the issuer URL", issuer, strings.Join(tried, ", "))
}

// getJSON GETs url and decodes its JSON body, read up to
// maxDocumentSize, into v. It returns the HTTP status, and an error that
// wraps ErrUnavailable when the server cannot be reached or fails (5xx).
func getJSON(ctx context.Context, client *http.Client, url string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	return doJSON(client, req, v)
}

// doJSON sends req and decodes its JSON body, read up to
// maxDocumentSize, into v; see getJSON.
func doJSON(client *http.Client, req *http.Request, v any) (int, error) {
	url := req.URL.Redacted()
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %w", ErrUnavailable, url, unwrapURLError(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500:
		return resp.StatusCode, fmt.Errorf("%w: %s answered %s", ErrUnavailable, url, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return resp.StatusCode, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return resp.StatusCode, fmt.Errorf("%s answered with Content-Type %q, not JSON", url, ct)
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentSize+1))
	switch {
	case err != nil:
		return resp.StatusCode, fmt.Errorf("%w: reading %s: %w", ErrUnavailable, url, err)
	case len(body) > maxDocumentSize:
		return resp.StatusCode, fmt.Errorf("%s answered more than %d bytes: not a metadata document or key set", url, maxDocumentSize)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s answered malformed JSON: %w", url, err)
	}
	return resp.StatusCode, nil
}

// unwrapURLError drops net/http's *url.Error, whose text repeats the
// method and URL the caller's message already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
