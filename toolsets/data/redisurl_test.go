package data

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testredis"
)

// TestRedisURL: --redis takes a URL with a password and TLS. Replicas
// reach a redis-server that speaks TLS only and wants a password, with
// rediss://:password@host:port and the server's CA trusted through
// SSL_CERT_FILE; a server started without that trust, with the wrong
// password or no Redis URL stops at once with
// an error that says what to fix, without the password.
func TestRedisURL(t *testing.T) {
	ca, cert, key := testredis.Certificates(t)
	rds := testredis.StartWith(t, testredis.Options{Password: "pw-right", CertFile: cert, KeyFile: key})
	work, dataDir := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(work, "sales.csv"), []byte(sales), 0o644))
	trust := []string{"SSL_CERT_FILE=" + ca}

	url := "rediss://:pw-right@" + rds.Addr
	s1 := startServerEnv(t, work, trust, "--data-dir", dataDir, "--redis", url)
	s2 := startServerEnv(t, work, trust, "--data-dir", dataDir, "--redis", url)
	h, _ := tableOf(t, mustTool(t, connect(t, s1.url, "alice"), "load_csv", map[string]any{"path": "sales.csv"}))
	mustTool(t, connect(t, s2.url, "alice"), "describe", map[string]any{"table": h})
	if v, err := rds.Do("HGET", "toolwire:handle:"+h, "size"); err != nil || v == "" {
		t.Fatalf("the handle is not in the TLS server: %q, %v", v, err)
	}

	for _, c := range []struct {
		name  string
		env   []string
		redis string
		want  string
	}{
		{"CA not trusted", []string{"SSL_CERT_FILE=" + filepath.Join(t.TempDir(), "none.pem")}, url, "trust its CA (SSL_CERT_FILE=ca.pem)"},
		{"wrong password", trust, "rediss://:pw-wrong@" + rds.Addr, "redis refused the credentials"},
		{"no password", trust, "rediss://" + rds.Addr, "redis refused the credentials"},
		{"not a Redis URL", trust, "https://:pw-wrong@" + rds.Addr, `the scheme "https" is not redis:// nor rediss://`},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A server that starts instead is stopped after a minute.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, toolwire(t), "serve", "data", "--http", "127.0.0.1:0", "--data-dir", dataDir, "--redis", c.redis)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), c.env...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "pw-wrong") || strings.Contains(string(out), "pw-right") {
				t.Errorf("toolwire serve data --redis %s: %v\n%s\nwant an error with %q, without the password", c.redis, err, out, c.want)
			}
		})
	}
}
