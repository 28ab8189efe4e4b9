package oauth

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []authChallenge // nil with err
		err  string
	}{
		{in: `Bearer`, want: []authChallenge{{"bearer", map[string]string{}}}},
		{in: `Bearer realm="x", scope="a b"`, want: []authChallenge{{"bearer", map[string]string{"realm": "x", "scope": "a b"}}}},
		{in: `BEARER Scope = "a\"b\\c" ,error=insufficient_scope`, want: []authChallenge{{"bearer", map[string]string{"scope": `a"b\c`, "error": "insufficient_scope"}}}},
		{in: `Basic realm="r", Bearer scope=mcp:read`, want: []authChallenge{{"basic", map[string]string{"realm": "r"}}, {"bearer", map[string]string{"scope": "mcp:read"}}}},
		{in: `Negotiate abc+/de==, Bearer error="x"`, want: []authChallenge{{"negotiate", map[string]string{}}, {"bearer", map[string]string{"error": "x"}}}},
		{in: `Bearer,,  , Basic`, want: []authChallenge{{"bearer", map[string]string{}}, {"basic", map[string]string{}}}},
		{in: ``},
		{in: `scope="a"`, err: "before any scheme"},
		{in: `Bearer scope="a", scope="b"`, err: "given twice"},
		{in: `Bearer SCOPE="a", scope="b"`, err: "given twice"},
		{in: `Bearer scope="a`, err: "unterminated"},
		{in: `Bearer scope=`, want: []authChallenge{{"bearer", map[string]string{}}}}, // a token68
		{in: `Bearer realm="a", scope=`, err: "without value"},
		{in: `Bearer scope="a` + "\x01" + `"`, err: "control character"},
		{in: `Bearer @`, err: "unexpected"},
		{in: "Bearer " + manyParams(maxAuthParams+1), err: "parameters"},
		{in: strings.Repeat("Basic, ", maxChallenges+1), err: "challenges"},
	} {
		got, err := parseChallenges(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v, %v\nwant %v", c.in, got, err, c.want)
		}
	}
}

// manyParams returns n parameters p0=v, p1=v, ...
func manyParams(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "p%d=v, ", i)
	}
	return b.String()
}

func TestParseChallenge(t *testing.T) {
	const rm = "https://mcp.example.com/.well-known/oauth-protected-resource"
	for _, c := range []struct {
		name   string
		values []string
		want   challenge
	}{
		{"none", nil, challenge{}},
		{"full", []string{`Bearer resource_metadata="` + rm + `", scope="a b", error="insufficient_scope"`},
			challenge{resourceMetadata: rm, scopes: []string{"a", "b"}, err: "insufficient_scope"}},
		{"empty scope", []string{`Bearer scope=""`}, challenge{scopes: []string{}}},
		{"Bearer after another scheme", []string{`Basic realm="x", Bearer scope="a"`}, challenge{scopes: []string{"a"}}},
		{"malformed value skipped", []string{`Bearer scope="a`, `Bearer scope="b"`}, challenge{scopes: []string{"b"}}},
		{"repeated: the first", []string{`Bearer scope="a"`, `Bearer scope="b"`}, challenge{scopes: []string{"a"}}},
		{"repeated in one value: the first", []string{`Bearer scope="a", Bearer scope="b"`}, challenge{scopes: []string{"a"}}},
		{"ambiguous parameter: the value ignored", []string{`Bearer resource_metadata="` + rm + `", resource_metadata="https://evil.example.com/x"`}, challenge{}},
		{"resource_metadata not a URL", []string{`Bearer resource_metadata="/relative", scope="a"`}, challenge{scopes: []string{"a"}}},
		{"resource_metadata over http, not loopback", []string{`Bearer resource_metadata="http://mcp.example.com/prm"`}, challenge{}},
		{"resource_metadata over http to loopback", []string{`Bearer resource_metadata="http://127.0.0.1:8/prm"`}, challenge{resourceMetadata: "http://127.0.0.1:8/prm"}},
		{"invalid scope", []string{`Bearer scope="a \"b", error="e"`}, challenge{err: "e"}},
		{"too many scopes", []string{fmt.Sprintf(`Bearer scope="%s"`, strings.Repeat("s ", maxScopes+1))}, challenge{}},
		{"past the bound", []string{strings.Repeat(" ", maxChallengeBytes), `Bearer scope="a"`}, challenge{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range c.values {
				h.Add("WWW-Authenticate", v)
			}
			if got := parseChallenge(h); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%+v, want %+v", got, c.want)
			}
		})
	}
}

func TestCanonicalResource(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://MCP.Example.com/mcp/", "https://mcp.example.com/mcp"},
		{"HTTPS://mcp.example.com:443", "https://mcp.example.com"},
		{"http://127.0.0.1:80/", "http://127.0.0.1"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x"},
		{"https://mcp.example.com:8443/a?b=c", "https://mcp.example.com:8443/a?b=c"},
	} {
		got, err := CanonicalResource(c.in)
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"mcp.example.com", "ftp://x/y", "https://x/#f", "https://u@x/", "https://"} {
		if got, err := CanonicalResource(in); err == nil {
			t.Errorf("%q: %q, want an error", in, got)
		}
	}
}

func TestResourceCovers(t *testing.T) {
	for _, c := range []struct {
		resource, server string
		want             bool
	}{
		{"https://x/mcp", "https://x/mcp", true},
		{"https://X/mcp/", "https://x/mcp", true},
		{"https://x", "https://x/mcp", true},
		{"https://x:443/", "https://x/mcp", true},
		{"https://x/", "https://x/a/mcp", true},
		{"https://x/a", "https://x/a/mcp", true},
		{"https://x/ab", "https://x/a", false},
		{"https://x/a/mcp", "https://x/a", false},
		{"http://x/mcp", "https://x/mcp", false},
		{"https://x:8443/mcp", "https://x/mcp", false},
		{"https://y/mcp", "https://x/mcp", false},
		{"https://x/mcp?t=1", "https://x/mcp", false},
		{"not a url", "https://x/mcp", false},
	} {
		if got := resourceCovers(c.resource, c.server); got != c.want {
			t.Errorf("resourceCovers(%q, %q) = %v", c.resource, c.server, got)
		}
	}
}
