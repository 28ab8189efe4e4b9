package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/internal/testhydra"
	"github.com/toolwire/toolwire/internal/testredis"
	"github.com/toolwire/toolwire/mcp"
)

// TestServeAuthReplicas: two users with tokens from a real authorization
// server (Ory Hydra) on two replicas of `toolwire serve data --http
// --auth-issuer …` that share tables (--data-dir) and handles (--redis).
// Each user loads a table; the other can use it through no tool that
// takes a table (every one of them is tried, on either replica, in either
// protocol era), and each refusal reads exactly as for a handle that never
// existed; its user reaches it through each of them from other sessions,
// the other protocol era and the other replica, and its release there
// ends it on both.
func TestServeAuthReplicas(t *testing.T) {
	h := testhydra.Start(t)
	rs := testredis.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	files, tables := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(files, "sales.csv"), []byte("region,amount\neast,10\nwest,20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const aud = "http://mcp.test/mcp" // the replicas' one canonical URL, behind a load balancer
	var urls []string
	var logs []*syncBuffer
	for range 2 {
		addr, log := serveHTTPWithLog(t, "data", "--allow-dir", files, "--data-dir", tables, "--redis", rs.Addr,
			"--auth-issuer", h.Issuer(), "--auth-audience", aud, "--auth-scope", "mcp")
		urls = append(urls, "http://"+addr+"/mcp")
		logs = append(logs, log)
	}
	const redirect = "http://127.0.0.1/callback"
	id, secret, err := h.CreateClient(ctx, testhydra.Client{GrantTypes: []string{"authorization_code"}, RedirectURIs: []string{redirect}, Scopes: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: redirect, Scopes: []string{"mcp"}}
	eras := []string{mcp.Version20251125, ""} // a legacy session; modern requests
	var tokens, answers []string
	// connect opens a session (legacy, or modern requests) for user on a
	// replica, with a token of its own.
	connect := func(user string, replica int, version string) *mcp.ClientSession {
		t.Helper()
		tok, err := h.UserToken(ctx, cfg, user, aud)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok.AccessToken)
		s, err := (&mcp.Client{Info: mcp.Implementation{Name: "test", Version: "1"}, ProtocolVersion: version}).Connect(ctx,
			&mcp.HTTPTransport{URL: urls[replica], Header: http.Header{"Authorization": {"Bearer " + tok.AccessToken}}})
		if err != nil {
			t.Fatalf("%s on replica %d: %v", user, replica, err)
		}
		return s
	}
	// call calls a tool in a session of its own.
	call := func(user string, replica int, version, name string, args map[string]any) (string, bool) {
		t.Helper()
		s := connect(user, replica, version)
		defer s.Close()
		b, _ := json.Marshal(args)
		res, err := s.CallTool(ctx, name, b)
		if err != nil {
			t.Fatalf("%s on replica %d: %s: %v", user, replica, name, err)
		}
		answers = append(answers, res.Content[0].Text)
		return res.Content[0].Text, res.IsError
	}

	// Every tool that takes a table, with its other arguments (path: a
	// file the call writes), and what its user's call answers.
	uses := []struct {
		tool  string
		args  map[string]any
		shows string
	}{
		{"describe", nil, "east"},
		{"head", nil, "east"},
		{"drop_missing", nil, "dropped 0 of 2 rows"},
		{"filter", map[string]any{"column": "region", "op": "eq", "value": "east"}, "kept 1 of 2 rows"},
		{"select", map[string]any{"columns": []string{"amount"}}, `"columns":["amount"]`},
		{"sort", map[string]any{"by": []string{"amount"}, "descending": true}, `"rows":2`},
		{"group_by", map[string]any{"by": []string{"region"}, "aggregations": []map[string]string{{"column": "amount", "function": "sum"}}}, "sum_amount"},
		{"query", nil, "west,20"},
		{"save_csv", map[string]any{"path": "out.csv"}, `"rows":2`},
		{"save_parquet", map[string]any{"path": "out.parquet"}, `"rows":2`},
		{"release", nil, "released tbl_"},
	}
	// args returns the arguments of a use of table by user.
	args := func(tool string, more map[string]any, table, user string) map[string]any {
		a := map[string]any{"table": table}
		if tool == "query" { // its tables by the names the SQL uses
			a = map[string]any{"sql": "SELECT * FROM sales ORDER BY amount DESC", "tables": map[string]any{"sales": table}}
		}
		for k, v := range more {
			if k == "path" {
				v = user + "-" + table + "-" + v.(string)
			}
			a[k] = v
		}
		return a
	}
	// The data toolset's tools that take a table are those above.
	s := connect("carol", 0, "")
	infos, err := s.ListTools(ctx)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	var takeTables, tried []string
	for _, info := range infos {
		if strings.Contains(string(info.InputSchema), "tbl_") {
			takeTables = append(takeTables, info.Name)
		}
	}
	for _, u := range uses {
		tried = append(tried, u.tool)
	}
	if slices.Sort(takeTables); !slices.Equal(takeTables, slices.Sorted(slices.Values(tried))) {
		t.Fatalf("the tools that take a table are %v; the test tries %v", takeTables, tried)
	}
	// What each tool answers for a handle that never existed: the other
	// user's handle must read the same.
	unknown := handle.NewID(handle.Kind{Prefix: "tbl"})
	never := map[string]string{}
	for _, u := range uses {
		text, isErr := call("carol", 1, "", u.tool, args(u.tool, u.args, unknown, "carol"))
		if !isErr || !strings.Contains(text, unknown) {
			t.Fatalf("%s of a handle that never existed: %q (error %v)", u.tool, text, isErr)
		}
		never[u.tool] = text
	}

	for _, owner := range []string{"alice", "bob"} {
		other := map[string]string{"alice": "bob", "bob": "alice"}[owner]
		text, isErr := call(owner, 0, mcp.Version20251125, "load_csv", map[string]any{"path": "sales.csv"})
		var loaded struct{ Table string }
		if err := json.Unmarshal([]byte(text), &loaded); isErr || err != nil || !strings.HasPrefix(loaded.Table, "tbl_") {
			t.Fatalf("%s: load_csv: %q", owner, text)
		}
		table := loaded.Table
		for i, u := range uses {
			// The other user, on either replica, in either era: refused as
			// if the handle never existed, and nothing written.
			replica, era := i%2, eras[i%2]
			a := args(u.tool, u.args, table, other)
			text, isErr := call(other, replica, era, u.tool, a)
			if want := strings.ReplaceAll(never[u.tool], unknown, table); !isErr || text != want {
				t.Errorf("%s on replica %d (protocol %q): %s of %s's table: %q (error %v), want %q, as for a handle that never existed",
					other, replica, era, u.tool, owner, text, isErr, want)
			}
			if p, ok := a["path"].(string); ok {
				if _, err := os.Stat(filepath.Join(files, p)); !os.IsNotExist(err) {
					t.Errorf("%s's %s of %s's table wrote %s (%v)", other, u.tool, owner, p, err)
				}
			}
			// Its user, from another session, on the other replica, in the
			// other era.
			replica, era = (i+1)%2, eras[(i+1)%2]
			a = args(u.tool, u.args, table, owner)
			text, isErr = call(owner, replica, era, u.tool, a)
			if isErr || !strings.Contains(text, u.shows) {
				t.Errorf("%s on replica %d (protocol %q): %s of its table: %q (error %v), want it to show %q", owner, replica, era, u.tool, text, isErr, u.shows)
			}
			if p, ok := a["path"].(string); ok {
				if fi, err := os.Stat(filepath.Join(files, p)); err != nil || fi.Size() == 0 {
					t.Errorf("%s's %s of its table wrote no %s (%v)", owner, u.tool, p, err)
				}
			}
		}
		// Released (the last use) on one replica, the table is gone on both.
		for replica := range urls {
			if text, isErr := call(owner, replica, "", "head", map[string]any{"table": table}); !isErr || !strings.Contains(text, "expired") {
				t.Errorf("%s on replica %d: head of its released table: %q (error %v)", owner, replica, text, isErr)
			}
		}
	}
	for _, log := range logs {
		answers = append(answers, log.String())
	}
	checkNoTokens(t, tokens, answers)
}
