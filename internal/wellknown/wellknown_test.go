package wellknown

import (
	"net/url"
	"slices"
	"testing"
)

func TestAuthorizationServer(t *testing.T) {
	for _, tt := range []struct {
		issuer string
		want   []string
	}{
		{"https://as.example", []string{
			"https://as.example/.well-known/oauth-authorization-server",
			"https://as.example/.well-known/openid-configuration",
		}},
		{"https://as.example/", []string{
			"https://as.example/.well-known/oauth-authorization-server",
			"https://as.example/.well-known/openid-configuration",
		}},
		{"https://as.example/tenant1", []string{
			"https://as.example/.well-known/oauth-authorization-server/tenant1",
			"https://as.example/.well-known/openid-configuration/tenant1",
			"https://as.example/tenant1/.well-known/openid-configuration",
		}},
		{"http://127.0.0.1:4444/realms/a%2Fb/", []string{
			"http://127.0.0.1:4444/.well-known/oauth-authorization-server/realms/a%2Fb",
			"http://127.0.0.1:4444/.well-known/openid-configuration/realms/a%2Fb",
			"http://127.0.0.1:4444/realms/a%2Fb/.well-known/openid-configuration",
		}},
	} {
		u, err := url.Parse(tt.issuer)
		if err != nil {
			t.Fatal(err)
		}
		if got := AuthorizationServer(u); !slices.Equal(got, tt.want) {
			t.Errorf("AuthorizationServer(%s) =\n%q\nwant\n%q", tt.issuer, got, tt.want)
		}
	}
}
