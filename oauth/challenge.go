package oauth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Bounds of what is read from WWW-Authenticate.
const (
	// maxChallengeBytes bounds the WWW-Authenticate field values read, all
	// together: values past it are ignored.
	maxChallengeBytes = 8 << 10
	// maxChallenges and maxAuthParams bound one field value's challenges
	// and one challenge's parameters.
	maxChallenges = 16
	maxAuthParams = 32
	// maxScopes bounds the scopes of one challenge or metadata document.
	maxScopes = 64
)

// challenge is what a response's Bearer challenge (RFC 6750 §3, RFC 9728
// §5.1) says; the zero value is no challenge.
type challenge struct {
	// resourceMetadata is the URL of the Protected Resource Metadata, or
	// "" when absent or not a URL tokens may follow.
	resourceMetadata string
	// scopes are the scopes the server asks for; nil when the challenge
	// names none (an empty scope parameter gives an empty, non-nil set).
	scopes []string
	// err is the error code, e.g. insufficient_scope or invalid_token.
	err string
}

// authChallenge is one challenge of a WWW-Authenticate field value.
type authChallenge struct {
	scheme string            // lower case
	params map[string]string // names in lower case
}

// parseChallenge returns the first well-formed Bearer challenge of h's
// WWW-Authenticate fields. A malformed field value is ignored as a whole
// (the client then discovers the metadata at the well-known URLs), as are
// values past maxChallengeBytes; a scope or resource_metadata parameter
// that is not valid is ignored alone.
func parseChallenge(h http.Header) challenge {
	budget := maxChallengeBytes
	for _, v := range h.Values("Www-Authenticate") {
		if budget -= len(v); budget < 0 {
			break
		}
		cs, err := parseChallenges(v)
		if err != nil {
			continue
		}
		for _, c := range cs {
			if c.scheme == "bearer" {
				return bearerChallenge(c.params)
			}
		}
	}
	return challenge{}
}

// bearerChallenge interprets a Bearer challenge's parameters.
func bearerChallenge(p map[string]string) challenge {
	var ch challenge
	ch.err = p["error"]
	if rm, ok := p["resource_metadata"]; ok {
		if _, err := endpointURL(rm); err == nil {
			ch.resourceMetadata = rm
		}
	}
	if s, ok := p["scope"]; ok {
		if scopes, err := parseScopes(s); err == nil {
			ch.scopes = scopes
		}
	}
	return ch
}

// parseScopes splits a space-separated scope list, checking each scope.
func parseScopes(s string) ([]string, error) {
	scopes := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
	if len(scopes) > maxScopes {
		return nil, fmt.Errorf("more than %d scopes", maxScopes)
	}
	for _, sc := range scopes {
		if !validScope(sc) {
			return nil, fmt.Errorf("%q is not a valid scope", sc)
		}
	}
	if scopes == nil {
		scopes = []string{}
	}
	return scopes, nil
}

// parseChallenges parses one WWW-Authenticate field value (RFC 9110
// §11.6.1): a comma-separated list of challenges, each a scheme followed
// by a token68 or by comma-separated name=value parameters. A parameter
// named twice in one challenge is an error, the value being ambiguous.
func parseChallenges(s string) ([]authChallenge, error) {
	var out []authChallenge
	i := 0
	for {
		i = skip(s, i, " \t,")
		if i >= len(s) {
			return out, nil
		}
		tok, j := readToken(s, i)
		if tok == "" {
			return nil, fmt.Errorf("unexpected %q at offset %d", s[i], i)
		}
		k := skip(s, j, " \t")
		if k < len(s) && s[k] == '=' {
			if len(out) == 0 {
				return nil, errors.New("a parameter before any scheme")
			}
			val, end, err := readValue(s, skip(s, k+1, " \t"))
			if err != nil {
				return nil, err
			}
			c := out[len(out)-1]
			name := strings.ToLower(tok)
			if _, dup := c.params[name]; dup {
				return nil, fmt.Errorf("parameter %s given twice", name)
			}
			if len(c.params) >= maxAuthParams {
				return nil, fmt.Errorf("more than %d parameters", maxAuthParams)
			}
			c.params[name] = val
			i = end
			continue
		}
		if len(out) >= maxChallenges {
			return nil, fmt.Errorf("more than %d challenges", maxChallenges)
		}
		out = append(out, authChallenge{scheme: strings.ToLower(tok), params: map[string]string{}})
		i = skipToken68(s, j)
	}
}

// skipToken68 returns the offset after the token68 that follows the scheme
// ending at i, if one does (a run of token68 characters, then '='
// padding, then the end of the challenge), else i.
func skipToken68(s string, i int) int {
	k := skip(s, i, " ")
	if k == i {
		return i
	}
	start := k
	for k < len(s) && strings.IndexByte("-._~+/", s[k]) >= 0 || k < len(s) && isAlnum(s[k]) {
		k++
	}
	if k == start {
		return i
	}
	for k < len(s) && s[k] == '=' {
		k++
	}
	if end := skip(s, k, " \t"); end == len(s) || s[end] == ',' {
		return end
	}
	return i
}

// readValue reads a parameter's value at i: a quoted string, or else a
// run of visible characters other than comma and quote (a token, read
// leniently: servers send scope=a:b unquoted).
func readValue(s string, i int) (val string, end int, err error) {
	if i < len(s) && s[i] == '"' {
		return readQuoted(s, i)
	}
	j := i
	for j < len(s) && s[j] > 0x20 && s[j] < 0x7f && s[j] != ',' && s[j] != '"' {
		j++
	}
	if j == i {
		return "", 0, fmt.Errorf("a parameter without value at offset %d", i)
	}
	return s[i:j], j, nil
}

// readQuoted reads the quoted string starting at s[i] == '"'.
func readQuoted(s string, i int) (val string, end int, err error) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return b.String(), j + 1, nil
		case c == '\\' && j+1 < len(s):
			j++
			b.WriteByte(s[j])
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", 0, fmt.Errorf("a control character in a quoted string at offset %d", j)
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("an unterminated quoted string")
}

// readToken reads the token (RFC 9110 tchar run) at i.
func readToken(s string, i int) (string, int) {
	j := i
	for j < len(s) && (isAlnum(s[j]) || strings.IndexByte("!#$%&'*+-.^_`|~", s[j]) >= 0) {
		j++
	}
	return s[i:j], j
}

// skip returns the offset of the first byte at or after i not in set.
func skip(s string, i int, set string) int {
	for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
		i++
	}
	return i
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
