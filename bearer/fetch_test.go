package bearer

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDiscoverOpenID: an issuer with a path whose metadata is only at
// the OpenID Connect path-appended URL is found there, after the two
// others answered 404.
func TestDiscoverOpenID(t *testing.T) {
	var asked []string
	var issuer string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if r.URL.Path != "/tenant1/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprintf(w, `{"issuer": %q, "jwks_uri": %q}`, issuer, issuer+"/keys")
	}))
	defer ts.Close()
	issuer = ts.URL + "/tenant1"
	md, err := discover(context.Background(), ts.Client(), issuer)
	if err != nil {
		t.Fatal(err)
	}
	if md.JWKSURI != issuer+"/keys" || len(asked) != 3 {
		t.Errorf("metadata %+v after asking %q", md, asked)
	}
}

// TestDocumentBound: a metadata document or key set larger than
// maxDocumentSize is refused, and so is one that is not JSON.
func TestDocumentBound(t *testing.T) {
	for _, tt := range []struct {
		name, ctype string
		size        int
		want        string
	}{
		{"huge", "application/json", maxDocumentSize + 1, "more than 1048576 bytes"},
		{"at the bound", "application/json", maxDocumentSize, ""},
		{"HTML", "text/html", 20, `Content-Type "text/html", not JSON`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				fmt.Fprintf(w, `{"pad": "%s"}`, strings.Repeat("x", tt.size-len(`{"pad": ""}`)))
			}))
			defer ts.Close()
			var v map[string]any
			_, err := getJSON(context.Background(), ts.Client(), ts.URL, &v)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
