package bearer

import (
	"context"
	"crypto"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testas"
)

// FuzzBearerToken: whatever the Authorization headers, bearerToken never
// panics, and a token it returns is an RFC 6750 b64token of at most
// MaxTokenSize bytes that ends the one header, after "Bearer" (any case)
// and spaces.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "BEARER  x==", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer a b", "Bearer a\x00b", "Bearer ===", "Bearer a=b", "Bearer\tabc", ""} {
		f.Add(s, "")
	}
	f.Add("Bearer abc", "Bearer def")
	f.Fuzz(func(t *testing.T, v1, v2 string) {
		h := http.Header{}
		if v1 != "" {
			h.Add("Authorization", v1)
		}
		if v2 != "" {
			h.Add("Authorization", v2)
		}
		token, err := bearerToken(h)
		if err != nil {
			if token != "" {
				t.Fatalf("token %q with error %v", token, err)
			}
			return
		}
		values := h.Values("Authorization")
		if len(values) != 1 {
			t.Fatalf("%d headers, token %q", len(values), token)
		}
		if token == "" || len(token) > MaxTokenSize || !isB64Token(token) || strings.ContainsAny(token, " \t\"\\,") {
			t.Fatalf("token %q from %q", token, values[0])
		}
		prefix, ok := strings.CutSuffix(values[0], token)
		if !ok || !strings.EqualFold(strings.TrimRight(prefix, " "), "Bearer") || !strings.HasSuffix(prefix, " ") {
			t.Fatalf("token %q is not what follows Bearer in %q", token, values[0])
		}
	})
}

// FuzzJWTVerify: whatever the token, Verify never panics, never accepts
// a token that does not carry the claims of one the server signed, and
// never puts the token in its error.
func FuzzJWTVerify(f *testing.F) {
	const aud = "https://mcp.example.com/mcp"
	as := testas.New(f, aud)
	v, err := NewJWT(context.Background(), JWTConfig{Issuer: as.URL, Audience: aud})
	if err != nil {
		f.Fatal(err)
	}
	signed := as.Claims("alice", nil)
	good := as.Sign(f, signed)
	f.Add(good)
	parts := strings.Split(good, ".")
	f.Add(parts[0] + "." + parts[1] + ".")
	f.Add(parts[0] + ".." + parts[2])
	f.Add(`eyJhbGciOiJub25lIn0.` + parts[1] + ".")
	f.Add(as.Token(f, "alice", map[string]any{"exp": 1}))
	f.Add("e30.e30.e30")
	f.Add(strings.Repeat("a", MaxTokenSize+1))
	f.Fuzz(func(t *testing.T, token string) {
		info, err := v.Verify(context.Background(), token)
		if err != nil {
			if len(token) >= 16 && strings.Contains(err.Error(), token) {
				t.Fatalf("the error shows the token: %v", err)
			}
			return
		}
		// Accepted: its claims are those signed (base64 has more than one
		// encoding of the same bytes, so the token may differ).
		var claims map[string]any
		if err := json.Unmarshal(info.Claims, &claims); err != nil {
			t.Fatal(err)
		}
		if info.Subject != "alice" || claims["jti"] != signed["jti"] {
			t.Fatalf("accepted %q: %+v", token, info)
		}
	})
}

// FuzzUsableKeys: whatever a key set holds, usableKeys never panics and
// keeps only public keys with an accepted alg, or none.
func FuzzUsableKeys(f *testing.F) {
	for _, s := range []string{
		`{"kty":"RSA","n":"sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw","e":"AQAB","alg":"RS256"}`,
		`{"kty":"oct","k":"c2VjcmV0","alg":"HS256"}`,
		`{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","alg":"none"}`,
		`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`,
		`{}`, `null`, `[]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		for _, k := range usableKeys([]json.RawMessage{json.RawMessage(key)}) {
			if _, ok := k.key.(interface{ Equal(crypto.PublicKey) bool }); !ok || (k.alg != "" && !strings.Contains(strings.Join(DefaultAlgorithms, " "), k.alg)) {
				t.Fatalf("kept %+v from %s", k, key)
			}
		}
	})
}
