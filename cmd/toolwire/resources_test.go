package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// tools show, resources, read, prompts and prompt against the reference
// server-everything.
func TestShowResourcesPrompts(t *testing.T) {
	cfg := claudeConfig(t, t.TempDir())
	tests := []struct {
		name string
		args []string
		code int
		out  *regexp.Regexp
	}{
		{"tools show", []string{"tools", "show", "everything__get-sum"}, 0,
			regexp.MustCompile(`(?s)^everything__get-sum\n.*Returns the sum of two numbers\n\nHints: read-only: [^\n]*\n\nPARAMETER +TYPE +REQUIRED +DEFAULT +DESCRIPTION\na +number +yes +- +First number\nb +number +yes +- +Second number\n$`)},
		{"tools show defaults and enums", []string{"tools", "show", "everything__trigger-long-running-operation"}, 0,
			regexp.MustCompile(`(?m)^duration +number +- +10 +`)},
		{"tools show unknown", []string{"tools", "show", "everything__get-summ"}, 1, nil},
		{"resources", []string{"resources", "everything"}, 0,
			regexp.MustCompile(`(?m)^SERVER +URI +NAME +MIME TYPE\n(.|\n)*^everything +demo://resource/static/document/architecture.md +architecture.md +text/markdown$(.|\n)*^\nResource templates \(fill in the \{parameters\}, then toolwire read URI\):\nSERVER +URI TEMPLATE +NAME +MIME TYPE\n(.|\n)*^everything +demo://resource/dynamic/text/\{resourceId\} `)},
		{"read", []string{"read", "demo://resource/static/document/architecture.md"}, 0, regexp.MustCompile(`Architecture`)},
		{"read unknown server", []string{"read", "x://y", "--server", "nosuch"}, 1, nil},
		{"prompts", []string{"prompts"}, 0, regexp.MustCompile(`(?m)^everything__args-prompt +city\*, state +A prompt with two arguments`)},
		{"prompt", []string{"prompt", "everything__args-prompt", `{"city": "Paris"}`}, 0, regexp.MustCompile(`(?s)^\[user\]\n.*Paris`)},
		{"prompt missing argument", []string{"prompt", "everything__args-prompt"}, 1, nil},
		{"prompt bad arguments", []string{"prompt", "everything__args-prompt", `{"city": 1}`}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runEnv(t, nil, "", append(tt.args, "--config", cfg)...)
			if r.code != tt.code || tt.out != nil && !tt.out.MatchString(r.stdout) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
		})
	}
	r := runEnv(t, nil, "", "tools", "show", "everything__get-sum", "--json", "--config", cfg)
	var info struct {
		Name        string `json:"name"`
		InputSchema struct {
			Required []string `json:"required"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || info.Name != "everything__get-sum" || strings.Join(info.InputSchema.Required, ",") != "a,b" {
		t.Errorf("tools show --json: %v\n%s", err, r.stdout)
	}
	r = runEnv(t, nil, "", "resources", "--json", "--config", cfg)
	var res []struct{ Server, URI string }
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res) == 0 || res[0].Server != "everything" {
		t.Errorf("resources --json: %v\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stdout, `"uriTemplate": "demo://resource/dynamic/text/{resourceId}"`) {
		t.Errorf("resources --json lacks the templates:\n%s", r.stdout)
	}
}
