package main

import "testing"

func TestAdhocName(t *testing.T) {
	tests := []struct {
		command []string
		url     string
		want    string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-everything"}, "", "server-everything"},
		{[]string{"npx", "-y", "@playwright/mcp@latest"}, "", "mcp"},
		{[]string{"uvx", "mcp-server-fetch"}, "", "mcp-server-fetch"},
		{[]string{"pnpm", "dlx", "x"}, "", "pnpm"},
		{[]string{"uv", "run", "server.py"}, "", "server"},
		{[]string{"/usr/bin/node", "/p/node_modules/@modelcontextprotocol/server-everything/dist/index.js"}, "", "index"},
		{[]string{"python3", "-m"}, "", "python3"},
		{[]string{"/opt/bin/my-server", "--port", "3"}, "", "my-server"},
		{[]string{"./weird name!"}, "", "weird_name"},
		{[]string{"!!!"}, "", "server"},
		{nil, "http://127.0.0.1:8080/mcp", "127.0.0.1"},
		{nil, "https://mcp.example.com/mcp", "mcp.example.com"},
	}
	for _, tt := range tests {
		if got := adhocName(tt.command, tt.url); got != tt.want {
			t.Errorf("adhocName(%q, %q) = %q, want %q", tt.command, tt.url, got, tt.want)
		}
	}
}
