// Package host connects to the MCP servers a user configures and presents
// their tools as tool.Tools, so an agent calls a tool on any server as it
// calls a local Go function.
//
// The configuration is the "mcpServers" JSON that Claude Desktop, Cursor,
// VS Code and Windsurf use, so an existing file works as it is, plus a few
// optional keys of toolwire's own per server.
package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/joho/godotenv"
	"github.com/tailscale/hujson"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// Config is a host configuration: the servers to connect to, by name.
type Config struct {
	// Servers are keyed by the name tools are prefixed with.
	Servers map[string]*ServerConfig
	// Path is the file the configuration was read from, for messages.
	Path string
	// Warnings are what was ignored, e.g. unknown keys: worth showing to
	// the user, not worth failing for.
	Warnings []string
}

// ServerConfig configures one server. Command (stdio) or URL (HTTP) is set,
// or, by a program, Transport.
type ServerConfig struct {
	// stdio
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// EnvFile is a dotenv file (VS Code, Cursor) whose variables are added
	// to the server's environment; Env wins over it. A relative path is
	// relative to the configuration file.
	EnvFile string `json:"envFile,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	// HTTP
	URL string `json:"url,omitempty"`
	// ServerURL is Windsurf's name for URL.
	ServerURL string            `json:"serverUrl,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Type is "stdio", "http" (Streamable HTTP) or "sse" (the deprecated
	// HTTP+SSE transport), after parsing; the other apps' spellings
	// ("streamable-http", "streamableHttp", "local", ...) are accepted.
	// Empty means stdio for a command; for a URL, Streamable HTTP with a
	// fallback to HTTP+SSE, as the specification describes.
	Type string `json:"type,omitempty"`
	// DisabledTools is Windsurf's and Roo Code's name for Exclude.
	DisabledTools []string `json:"disabledTools,omitempty"`

	// toolwire's own keys.

	// Include, when set, keeps only these tools (names as the server gives
	// them). Exclude drops tools.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// Prefix replaces the server name in tool names ("server__tool"); an
	// empty string means no prefix, which makes a name collision an error.
	Prefix *string `json:"prefix,omitempty"`
	// Timeout, e.g. "30s", bounds each call of the server's tools (no
	// bound by default) and starting the server with its handshake
	// (default DefaultConnectTimeout).
	Timeout Duration `json:"timeout,omitempty"`
	// Inject gives values for tool parameters the host fills instead of the
	// model: by parameter name for every tool, or under a tool's name for
	// that tool ({"storage": {...}, "some_tool": {"executor": "x"}}).
	Inject map[string]json.RawMessage `json:"inject,omitempty"`
	// Disabled skips the server.
	Disabled bool `json:"disabled,omitempty"`
	// Allow names tools (as the server gives them) that an agent runs
	// without asking though they may change things. Cline's alwaysAllow
	// and autoApprove mean the same, and are read too.
	Allow       []string `json:"allow,omitempty"`
	AlwaysAllow []string `json:"alwaysAllow,omitempty"`
	AutoApprove []string `json:"autoApprove,omitempty"`
	// Confirm names tools an agent asks about before running, though
	// their annotations say they change nothing.
	Confirm []string `json:"confirm,omitempty"`
	// MaxResultBytes is the size above which a tool's result is kept
	// behind a handle and the model shown a preview: see ResultBytes.
	MaxResultBytes *ResultBytes `json:"maxResultBytes,omitempty"`

	// OAuth configures the login to an HTTP server that asks for one (the
	// MCP authorization flow): Claude Code's and Gemini CLI's "oauth"
	// object; Cursor's "auth" is read into it too. Without it, toolwire
	// logs in as a client it registers itself.
	OAuth *OAuthConfig `json:"oauth,omitempty"`
	// Auth is Cursor's name for OAuth.
	Auth *OAuthConfig `json:"auth,omitempty"`

	// Transport, set by a program (no configuration file can), reaches
	// the server in place of Command or URL: its own transport, or an
	// mcp.InMemoryTransport to test a host without processes.
	Transport mcp.ClientTransport `json:"-"`

	// Name is the server's key in the configuration.
	Name string `json:"-"`
	// target is the URL or command line as written, before ${VAR}
	// expansion (see Target).
	target string
}

// Target is the server's URL, or its command line, as the configuration
// writes them: ${VAR} references are left as they are, so that no secret
// from the environment shows when it is printed.
func (sc *ServerConfig) Target() string {
	if sc.target != "" {
		return sc.target
	}
	if sc.URL != "" {
		return sc.URL
	}
	return commandLine(sc.Command, sc.Args)
}

// commandLine joins a command and its arguments, quoting those that need
// it.
func commandLine(command string, args []string) string {
	parts := make([]string, 0, 1+len(args))
	for _, a := range append([]string{command}, args...) {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// Duration is a time.Duration written as "30s" in JSON.
type Duration time.Duration

// UnmarshalJSON reads "30s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q: use e.g. \"30s\" or \"2m\"", s)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("invalid duration %s: use e.g. \"30s\" or a number of seconds", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// MarshalJSON writes the duration as "30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// DefaultConfigPath is where the configuration is read from unless told
// otherwise: $TOOLWIRE_CONFIG, else $XDG_CONFIG_HOME/toolwire/mcp.json
// (~/.config/toolwire/mcp.json).
func DefaultConfigPath() string {
	if p := os.Getenv("TOOLWIRE_CONFIG"); p != "" {
		return p
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "toolwire", "mcp.json")
}

// LoadConfig reads a configuration file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("config %s does not exist: create it with an \"mcpServers\" object (see `toolwire tools --help`), or pass --config", path)
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return ParseConfig(path, b, os.LookupEnv)
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// validPrefix is what a tool name prefix may hold: what model providers
// take in a function name (see tool.CheckName).
var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// knownKeys are the server keys toolwire reads.
var knownKeys = []string{"command", "args", "env", "envFile", "cwd", "url", "serverUrl", "headers", "type",
	"include", "exclude", "disabledTools", "prefix", "timeout", "inject", "disabled", "allow", "alwaysAllow", "autoApprove", "confirm",
	"maxResultBytes", "oauth", "auth"}

// otherAppKeys are server keys other apps document that mean nothing to
// toolwire (approval lists, gallery metadata, ...): accepted in silence.
var otherAppKeys = []string{"description", "dev", "gallery", "version",
	"transportType", "watchPaths", "networkTimeout", "trust", "name"}

// ParseConfig parses a configuration; path names it in errors, and lookup
// resolves ${VAR} references (os.LookupEnv in LoadConfig).
func ParseConfig(path string, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	// VS Code's mcp.json is JSONC: comments and trailing commas, which
	// Standardize blanks out, keeping offsets.
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		return nil, fmt.Errorf("config %s is not valid JSON: %s", path, strings.TrimPrefix(err.Error(), "hujson: "))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(std, &top); err != nil {
		return nil, fmt.Errorf("config %s: want a JSON object with \"mcpServers\" in it, not %s", path, jsonKind(std))
	}
	raw, ok := top["mcpServers"]
	if !ok {
		raw, ok = top["servers"] // VS Code's key
	}
	if !ok {
		return nil, fmt.Errorf("config %s has no \"mcpServers\" object, nor VS Code's \"servers\" (top-level keys: %s)", path, strings.Join(sortedKeys(top), ", "))
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil {
		return nil, fmt.Errorf("config %s: \"mcpServers\" must be an object of servers by name: %v", path, err)
	}
	cfg := &Config{Servers: map[string]*ServerConfig{}, Path: path}
	for _, name := range sortedKeys(servers) {
		body := servers[name]
		where := fmt.Sprintf("config %s, server %q", path, name)
		if !validName.MatchString(name) {
			return nil, fmt.Errorf("%s: a server name may hold only letters, digits, '_', '-' and '.'", where)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(body, &keys); err != nil {
			return nil, fmt.Errorf("%s: want an object with \"command\" or \"url\": %v", where, strings.TrimPrefix(err.Error(), "json: "))
		}
		for _, k := range sortedKeys(keys) {
			if !slices.Contains(knownKeys, k) && !slices.Contains(otherAppKeys, k) {
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: unknown key %q ignored (known: %s)", where, k, strings.Join(knownKeys, ", ")))
			}
		}
		var sc ServerConfig
		if err := json.Unmarshal(body, &sc); err != nil {
			return nil, fmt.Errorf("%s: %s", where, describeField(err))
		}
		sc.Name = name
		if err := sc.expand(where, lookup); err != nil {
			return nil, err
		}
		if err := sc.check(where); err != nil {
			return nil, err
		}
		if err := sc.loadEnvFile(where, filepath.Dir(path)); err != nil {
			return nil, err
		}
		warnings, err := sc.checkOAuth(where, filepath.Dir(path), keys)
		if err != nil {
			return nil, err
		}
		cfg.Warnings = append(cfg.Warnings, warnings...)
		if !sc.Disabled {
			cfg.Servers[name] = &sc
		}
	}
	return cfg, nil
}

// jsonKind names the kind of a valid JSON value: "a list", "a string", ...
func jsonKind(data []byte) string {
	switch b := bytes.TrimSpace(data); {
	case len(b) == 0:
		return "nothing"
	case b[0] == '[':
		return "a list"
	case b[0] == '"':
		return "a string"
	case b[0] == 'n':
		return "null"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	}
	return "a number"
}

func describeField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("key %q: want %s, not a JSON %s", te.Field, describeType(te.Type.Kind().String()), te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func describeType(kind string) string {
	switch kind {
	case "slice":
		return "a list"
	case "map", "struct":
		return "an object"
	}
	return "a " + kind
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// varRef matches ${VAR}, ${VAR:-default}, and VS Code's ${env:VAR},
// ${userHome} and ${workspaceFolder}.
var varRef = regexp.MustCompile(`\$\{(env:)?([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// expand resolves ${VAR} (and ${VAR:-default}) in every string value.
func (sc *ServerConfig) expand(where string, lookup func(string) (string, bool)) error {
	switch {
	case sc.URL != "":
		sc.target = sc.URL
	case sc.ServerURL != "":
		sc.target = sc.ServerURL
	default:
		sc.target = commandLine(sc.Command, sc.Args)
	}
	var firstErr error
	exp := func(key, s string) string {
		return varRef.ReplaceAllStringFunc(s, func(ref string) string {
			m := varRef.FindStringSubmatch(ref)
			if v, ok := lookup(m[2]); ok {
				return v
			}
			if m[1] == "" {
				switch m[2] {
				case "userHome":
					if home, err := os.UserHomeDir(); err == nil {
						return home
					}
				case "workspaceFolder":
					if wd, err := os.Getwd(); err == nil {
						return wd
					}
				}
			}
			if m[3] != "" {
				return m[3][2:]
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("%s, key %q: environment variable %s is not set (export it, or write ${%s:-default})", where, key, m[2], m[2])
			}
			return ""
		})
	}
	sc.Command = exp("command", sc.Command)
	for i := range sc.Args {
		sc.Args[i] = exp("args", sc.Args[i])
	}
	for k, v := range sc.Env {
		sc.Env[k] = exp("env."+k, v)
	}
	sc.EnvFile = exp("envFile", sc.EnvFile)
	sc.Cwd = exp("cwd", sc.Cwd)
	sc.URL = exp("url", sc.URL)
	sc.ServerURL = exp("serverUrl", sc.ServerURL)
	for k, v := range sc.Headers {
		sc.Headers[k] = exp("headers."+k, v)
	}
	for k, v := range sc.Inject {
		sc.Inject[k] = json.RawMessage(exp("inject."+k, string(v)))
	}
	if sc.OAuth != nil {
		sc.OAuth.expand("oauth", exp)
	}
	if sc.Auth != nil {
		sc.Auth.expand("auth", exp)
	}
	return firstErr
}

// transportTypes maps each app's spelling of "type" to toolwire's.
var transportTypes = map[string]string{
	"stdio": "stdio", "local": "stdio",
	"http": "http", "streamable-http": "http", "streamableHttp": "http", "streamable_http": "http", "streamablehttp": "http", "remote": "http",
	"sse": "sse",
}

func (sc *ServerConfig) check(where string) error {
	if sc.URL == "" {
		sc.URL = sc.ServerURL
	}
	sc.Exclude = append(sc.Exclude, sc.DisabledTools...)
	switch {
	case sc.Command == "" && sc.URL == "":
		return fmt.Errorf("%s: set \"command\" (a server to launch over stdio) or \"url\" (an HTTP server)", where)
	case sc.Command != "" && sc.URL != "":
		return fmt.Errorf("%s: set either \"command\" or \"url\", not both", where)
	}
	if sc.Type != "" {
		t, ok := transportTypes[sc.Type]
		if !ok {
			return fmt.Errorf("%s, key \"type\": unknown transport %q (use stdio, http or sse)", where, sc.Type)
		}
		sc.Type = t
	}
	if sc.Type == "stdio" && sc.Command == "" {
		return fmt.Errorf("%s: type stdio needs \"command\"", where)
	}
	if (sc.Type == "http" || sc.Type == "sse") && sc.URL == "" {
		return fmt.Errorf("%s: type %s needs \"url\"", where, sc.Type)
	}
	if sc.Prefix != nil && *sc.Prefix != "" && !validPrefix.MatchString(*sc.Prefix) {
		return fmt.Errorf("%s, key \"prefix\": %q may hold only letters, digits, '_' and '-', as model providers take in tool names", where, *sc.Prefix)
	}
	return nil
}

// Allowed returns the host-wide names of the tools the configuration lets
// run without asking (allow, alwaysAllow, autoApprove).
func (sc *ServerConfig) Allowed() []string {
	var out []string
	for _, list := range [][]string{sc.Allow, sc.AlwaysAllow, sc.AutoApprove} {
		for _, n := range list {
			out = append(out, tool.SafeName(sc.ToolPrefix()+n))
		}
	}
	return out
}

// Confirmed returns the host-wide names of the tools the configuration
// says to ask about (confirm).
func (sc *ServerConfig) Confirmed() []string {
	out := make([]string, 0, len(sc.Confirm))
	for _, n := range sc.Confirm {
		out = append(out, tool.SafeName(sc.ToolPrefix()+n))
	}
	return out
}

// ToolPrefix returns what the server's tool names are prefixed with,
// including the "__" separator; "" for none. Without a "prefix" key it is
// the server's name, with each '.' made '_' (model providers reject '.').
func (sc *ServerConfig) ToolPrefix() string {
	p := strings.ReplaceAll(sc.Name, ".", "_")
	if sc.Prefix != nil {
		p = *sc.Prefix
	}
	if p == "" {
		return ""
	}
	return p + "__"
}

// loadEnvFile adds the variables of the envFile (a dotenv file) to Env,
// where Env does not set them already.
func (sc *ServerConfig) loadEnvFile(where, dir string) error {
	if sc.EnvFile == "" {
		return nil
	}
	p := sc.EnvFile
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	vars, err := godotenv.Read(p)
	if err != nil {
		return fmt.Errorf("%s, key \"envFile\": %w (a file of NAME=value lines; a relative path is relative to the configuration file)", where, err)
	}
	if sc.Env == nil {
		sc.Env = make(map[string]string, len(vars))
	}
	for k, v := range vars {
		if _, set := sc.Env[k]; !set {
			sc.Env[k] = v
		}
	}
	return nil
}
