package main

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

func TestReadBuildInfo(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	const rev = "abcdef1234567890abcdef1234567890abcdef12"
	tests := []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		want          string
	}{
		{"no build information", "", nil, "unknown"},
		{"no build information, -ldflags", "v1.2.3", nil, "v1.2.3"},
		{"-ldflags first", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.2"}}, "v1.2.3"},
		{"a release", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"go install @commit", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126113921-abcdef123456"}}, "v0.0.0-20261126113921-abcdef123456"},
		{"Go 1.24 from a checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.1-0.20261126113921-abcdef123456+dirty"},
			Settings: vcs("vcs.revision", rev, "vcs.modified", "true")}, "v0.4.1-0.20261126113921-abcdef123456+dirty"},
		{"devel with a commit", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", rev, "vcs.time", "2026-11-26T11:39:21Z", "vcs.modified", "false")}, "v0.0.0-20261126113921-abcdef123456"},
		{"devel with a modified commit", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", rev, "vcs.time", "2026-11-26T12:39:21+01:00", "vcs.modified", "true")}, "v0.0.0-20261126113921-abcdef123456+dirty"},
		{"devel with a commit and no time", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", rev)}, "devel-abcdef123456"},
		{"devel with a short revision", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "abc", "vcs.modified", "true")}, "devel-abc+dirty"},
		{"devel, no VCS (-buildvcs=false)", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "built from source"},
		{"no main version", "", &debug.BuildInfo{}, "built from source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := readBuildInfo(tt.ldflags, tt.bi, "go1.26")
			if v.Version != tt.want || v.Go != "go1.26" {
				t.Errorf("version %q (go %q), want %q", v.Version, v.Go, tt.want)
			}
		})
	}
}

// The version hosts see in serverInfo is the one toolwire --version and
// toolwire version print, and never Go's "(devel)".
func TestServerInfoVersion(t *testing.T) {
	res := serveSession(t, []string{"serve"})
	var init mcp.InitializeResult
	if err := json.Unmarshal(res[1], &init); err != nil {
		t.Fatal(err)
	}
	served := init.ServerInfo.Version
	if served == "" || served == "(devel)" || served == "unknown" {
		t.Fatalf("serverInfo.version %q", served)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := runEnv(t, nil, "", args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "toolwire "+served+",") && !strings.HasPrefix(r.stdout, "toolwire "+served+" commit ") {
			t.Errorf("toolwire %s: %q (exit %d), want the served version %q", args[0], r.stdout, r.code, served)
		}
	}
}
