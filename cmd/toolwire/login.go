package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/oauth"
)

// tokenStoreEnv chooses where tokens are kept: "keyring", "file", or
// unset for the keyring where there is one, else the file.
const tokenStoreEnv = "TOOLWIRE_TOKEN_STORE"

// keyringService names toolwire in the OS keyring.
const keyringService = "toolwire"

// tokenStore returns the user's store of OAuth grants: the OS keyring
// (its index in ~/.config/toolwire), or ~/.config/toolwire/tokens.json
// where there is no keyring or $TOOLWIRE_TOKEN_STORE says "file". It
// reads nothing until asked for a grant.
func tokenStore() (*oauth.UserStore, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("no directory for the login tokens: %w (set $HOME or $XDG_CONFIG_HOME)", err)
	}
	s, err := oauth.NewUserStore(filepath.Join(dir, "toolwire"), keyringService, oauth.Backend(os.Getenv(tokenStoreEnv)))
	if err != nil {
		return nil, fmt.Errorf("$%s: %w", tokenStoreEnv, err)
	}
	return s, nil
}

// loginCommand is the command that logs in to a server, for errors that
// say a login is needed (%s is the server's name).
func (o *hostOptions) loginCommand() string {
	if o.config == "" {
		return "toolwire login %s"
	}
	return "toolwire login %s --config " + shellQuote(o.config)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resolveServer finds SERVER: a configured server's name, or an http(s)
// URL (the configured server with that URL, if any, for its client
// settings). A URL needs no configuration file.
func (o *hostOptions) resolveServer(stderr io.Writer, arg string) (*host.Config, *host.ServerConfig, error) {
	isURL := strings.HasPrefix(arg, "https://") || strings.HasPrefix(arg, "http://")
	cfg, err := o.loadConfig(stderr)
	if err != nil {
		if !isURL {
			return nil, nil, err
		}
		cfg = &host.Config{Servers: map[string]*host.ServerConfig{}}
	}
	if !isURL {
		sc, err := (&host.Host{Config: cfg}).Server(arg)
		return cfg, sc, err
	}
	want, err := oauth.CanonicalResource(arg)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range (&host.Host{Config: cfg}).ServerNames() {
		sc := cfg.Servers[name]
		if r, err := oauth.CanonicalResource(sc.URL); err == nil && sc.URL != "" && r == want {
			return cfg, sc, nil
		}
	}
	return cfg, &host.ServerConfig{Name: arg, URL: arg}, nil
}

// checkLoginServer refuses a server that takes no OAuth login.
func checkLoginServer(cfg *host.Config, sc *host.ServerConfig) error {
	switch {
	case sc.Command != "":
		return fmt.Errorf("server %q is a command run over stdio: it takes its credentials from its environment (\"env\" in %s), not from a login", sc.Name, cfg.Path)
	case sc.OAuth != nil && sc.OAuth.Enabled != nil && !*sc.OAuth.Enabled:
		return fmt.Errorf("server %q has OAuth turned off (\"enabled\": false in its \"oauth\" in %s)", sc.Name, cfg.Path)
	case !sc.UsesOAuth():
		return fmt.Errorf("server %q sends an Authorization header of its own (\"headers\" in %s): remove it to log in with OAuth instead", sc.Name, cfg.Path)
	}
	return nil
}

func newLoginCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var noBrowser bool
	var port int
	var scopes []string
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to an MCP server that asks for it (OAuth), and keep the tokens",
		Long: `Log in to an MCP server over HTTP that requires authorization, as the MCP
specification describes it (OAuth 2.1): toolwire finds the server's
authorization server, registers itself there (or uses the client the
configuration names), and opens your browser at its login page. After you
log in, the browser comes back to a listener on 127.0.0.1 and toolwire
keeps the tokens for the next commands, renewing them as they expire.

SERVER is a configured server's name or an http(s) URL. The address to
visit is always printed too: open it yourself when no browser opens (on a
machine without one, or with --no-browser); $BROWSER chooses the browser.
When that browser runs on another machine (over SSH, say), its redirect to
127.0.0.1 cannot reach toolwire: paste the address it ends on at the
prompt instead.

A server configured with "grantType": "client_credentials" logs in as the
client itself, with no browser.

The tokens are kept in the OS keyring (macOS Keychain, Windows Credential
Manager, the Secret Service of a Linux desktop); where there is none, in
~/.config/toolwire/tokens.json, readable only by you. toolwire says which.
$TOOLWIRE_TOKEN_STORE=file or =keyring chooses. Tokens are never printed.
See toolwire help config for the "oauth" keys of a server.`,
		Example: `  toolwire login github
  toolwire login https://mcp.example.com/mcp
  toolwire login notion --no-browser        # print the address only
  toolwire login slack --port 8765          # a client registered with http://127.0.0.1:8765/callback`,
		Args:              withUsage(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.login(cmd, args[0], noBrowser, port, scopes)
		},
	}
	cmd.Flags().StringVar(&o.config, "config", "", "configuration file (default $TOOLWIRE_CONFIG, ~/.config/toolwire/mcp.json, else another app's: see toolwire help config)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", oauth.DefaultLoginTimeout, "give up when the login in the browser takes longer than this")
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "do not open a browser: print the address to visit")
	cmd.Flags().IntVar(&port, "port", 0, `the port of the redirect listener on 127.0.0.1 (default: the server's "callbackPort", else a free one)`)
	cmd.Flags().StringSliceVar(&scopes, "scope", nil, "ask for these scopes instead of those the server names (repeat, or separate with commas)")
	return cmd
}

func (o *hostOptions) login(cmd *cobra.Command, arg string, noBrowser bool, port int, scopes []string) error {
	stderr := cmd.ErrOrStderr()
	cfg, sc, err := o.resolveServer(stderr, arg)
	if err != nil {
		return err
	}
	if err := checkLoginServer(cfg, sc); err != nil {
		return err
	}
	store, err := tokenStore()
	if err != nil {
		return err
	}
	h := &host.Host{Config: cfg}
	h.Client.Info.Name, h.Tokens = "toolwire", store
	oc := h.OAuth(sc)
	if len(scopes) > 0 {
		oc.Scopes = scopes
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	if !sc.ClientCredentials() {
		redirect := sc.RedirectURI()
		if port != 0 {
			redirect = "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
		}
		lb, err := oauth.ListenLoopback(redirect)
		if err != nil {
			return err
		}
		defer lb.Close()
		lb.Timeout = o.timeout
		// On a terminal, the user may paste the address a browser on
		// another machine ends on (its 127.0.0.1 is not this one).
		paste := isTerminal(cmd.InOrStdin())
		lb.Open = func(authURL string) {
			if noBrowser {
				fmt.Fprintf(stderr, "toolwire: to log in to %s, open this address in a browser:\n\n  %s\n\n", sc.Name, authURL)
			} else {
				fmt.Fprintf(stderr, "toolwire: log in to %s in the browser; if none opens, visit:\n\n  %s\n\n", sc.Name, authURL)
				if err := oauth.OpenBrowser(authURL); err != nil {
					fmt.Fprintf(stderr, "toolwire: %v: open the address above yourself\n", err)
				}
			}
			if paste {
				fmt.Fprintln(stderr, "toolwire: if that browser is on another machine, paste here the address it ends on (a page that does not load)")
			}
		}
		if paste {
			go readPasted(cmd.InOrStdin(), lb, stderr)
		}
		oc.RedirectURL, oc.Authorize = lb.RedirectURL(), lb.Authorize
	}
	g, err := oc.Login(ctx)
	if err != nil {
		return fmt.Errorf("login to %s failed: %w", sc.Name, err)
	}
	if g.Subject == "" {
		if g.Subject = tokenSubject(g.AccessToken); g.Subject != "" {
			if err := store.Save(ctx, g); err != nil {
				return err
			}
		}
	}
	where, err := store.Where(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Logged in to %s%s.\n", sc.Name, describeGrant(g.Info(), time.Now()))
	if !o.g.quiet {
		fmt.Fprintf(stderr, "toolwire: the tokens are kept %s\n", where)
	}
	return nil
}

// readPasted gives the loopback listener the redirect a user pastes, a
// line at a time, until one is taken (the process ends with the login).
func readPasted(in io.Reader, lb *oauth.Loopback, stderr io.Writer) {
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if line == "" {
			continue
		}
		if err := lb.Deliver(line); err != nil {
			fmt.Fprintf(stderr, "toolwire: %v\n", err)
			continue
		}
		return
	}
}

// tokenSubject is the "sub" of an access token that is a JWT, read
// without verifying it: only to show whom the login is for, when the
// authorization server said nothing else. The token came straight from
// the token endpoint; the MCP server verifies it.
func tokenSubject(accessToken string) string {
	tok, err := jwt.ParseSigned(accessToken, []jose.SignatureAlgorithm{
		jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
		jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
	})
	if err != nil {
		return ""
	}
	var claims jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&claims); err != nil {
		return ""
	}
	return claims.Subject
}

// describeGrant says who a grant is for and until when, for a line that
// starts with "logged in".
func describeGrant(gi oauth.GrantInfo, now time.Time) string {
	var b strings.Builder
	if gi.Subject != "" {
		fmt.Fprintf(&b, " as %s", gi.Subject)
	}
	switch {
	case gi.Expiry.IsZero():
	case gi.Expiry.After(now):
		fmt.Fprintf(&b, " until %s", gi.Expiry.Local().Format("2006-01-02 15:04"))
	case gi.Refreshable:
		b.WriteString(" (token renewed on next use)")
	}
	if len(gi.Scopes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(gi.Scopes, " "))
	}
	return b.String()
}

func newLogoutCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	cmd := &cobra.Command{
		Use:   "logout SERVER",
		Short: "Forget the login to an MCP server: remove its tokens",
		Long: `Remove the tokens toolwire keeps for an MCP server (see toolwire login), from
the OS keyring or the token file. The next command that uses the server
says it needs a login. SERVER is a configured server's name or an http(s)
URL.`,
		Example: `  toolwire logout github
  toolwire logout https://mcp.example.com/mcp`,
		Args:              withUsage(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, sc, err := o.resolveServer(cmd.ErrOrStderr(), args[0])
			if err != nil {
				return err
			}
			if sc.URL == "" {
				return fmt.Errorf("server %q is a command run over stdio: there is no login to forget", sc.Name)
			}
			resource, err := oauth.CanonicalResource(sc.URL)
			if err != nil {
				return err
			}
			store, err := tokenStore()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			list, err := store.List(ctx)
			if err != nil {
				return err
			}
			if findGrant(list, resource) == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "Not logged in to %s: nothing to remove.\n", sc.Name)
				return nil
			}
			if err := store.Delete(ctx, resource); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Logged out of %s: its tokens are removed.\n", sc.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.config, "config", "", "configuration file (default $TOOLWIRE_CONFIG, ~/.config/toolwire/mcp.json, else another app's: see toolwire help config)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", time.Minute, "give up after this long (the OS keyring may ask to be unlocked)")
	return cmd
}

// findGrant returns the grant of a resource in a listing, or nil.
func findGrant(list []oauth.GrantInfo, resource string) *oauth.GrantInfo {
	for i := range list {
		if list[i].Resource == resource {
			return &list[i]
		}
	}
	return nil
}

// serverEntry is a server in the listing.
type serverEntry struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	URL       string   `json:"url,omitempty"`
	Command   string   `json:"command,omitempty"`
	Auth      authInfo `json:"auth"`
	// Status is what --check found: "ready", "login needed" or "failed".
	Status string `json:"status,omitempty"`
	Tools  *int   `json:"tools,omitempty"`
	Error  string `json:"error,omitempty"`
}

// authInfo is a server's authorization, without secrets.
type authInfo struct {
	// State is "logged_in", "login_needed", "client_credentials", "header"
	// or "none".
	State       string    `json:"state"`
	Subject     string    `json:"subject,omitempty"`
	Expiry      time.Time `json:"expiry,omitzero"`
	Refreshable bool      `json:"refreshable,omitempty"`
	Scopes      []string  `json:"scopes,omitempty"`
	Issuer      string    `json:"issuer,omitempty"`
	ClientID    string    `json:"client_id,omitempty"`
}

func newServersCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	var asJSON, check bool
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "List the configured MCP servers, and whom you are logged in to them as",
		Long: `List the servers of the configuration file: name, transport, URL or command
(as the file writes them: ${VAR} references are not expanded), and their
authorization:

  logged in as SUBJECT until TIME (scopes)   tokens kept by toolwire login
  login needed: toolwire login NAME          the login expired, or none was made for a
                                             server with an "oauth" key, or --check found
                                             one needed
  client credentials                         the client logs in itself (no user)
  header                                     the server's own Authorization header
  -                                          no login kept (a server may need none)

The listing reads the configuration and the token index only: no server is
started or asked. --check connects to every server too, and says whether
it is ready (with its number of tools), needs a login, or fails.`,
		Example: `  toolwire servers
  toolwire servers --check
  toolwire servers --json | jq '.[] | select(.auth.state == "logged_in") | .name'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.servers(cmd, asJSON, check)
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the servers as JSON (name, transport, url or command, auth; never a secret)")
	cmd.Flags().BoolVar(&check, "check", false, "connect to each server and say whether it is ready, needs a login, or fails")
	return cmd
}

func (o *hostOptions) servers(cmd *cobra.Command, asJSON, check bool) error {
	stderr := cmd.ErrOrStderr()
	cfg, err := o.loadConfig(stderr)
	if err != nil {
		return err
	}
	store, err := tokenStore()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	grants, err := store.List(ctx)
	if err != nil {
		return err
	}
	h := &host.Host{Config: cfg}
	names := h.ServerNames()
	entries := make([]serverEntry, len(names))
	now := time.Now()
	for i, name := range names {
		entries[i] = describeServer(cfg.Servers[name], grants, now)
	}
	if check {
		s, err := o.open(cmd)
		if err != nil {
			return err
		}
		defer s.close()
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tools, err := s.Tools(s.ctx, name)
				e := &entries[i]
				var lr *host.LoginRequiredError
				switch {
				case errors.As(err, &lr):
					e.Status = "login needed"
					e.Auth = authInfo{State: "login_needed"}
				case err != nil:
					e.Status, e.Error = "failed", err.Error()
				default:
					n := len(tools)
					e.Status, e.Tools = "ready", &n
				}
			}()
		}
		wg.Wait()
		s.progress.close()
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), entries)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
	header := "NAME\tTRANSPORT\tURL / COMMAND\tAUTH"
	if check {
		header += "\tSTATUS"
	}
	fmt.Fprintln(tw, header)
	for _, e := range entries {
		target := e.URL
		if target == "" {
			target = e.Command
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s", e.Name, e.Transport, oneLine(target, 60), authText(e, o.loginCommand(), now))
		if check {
			status := e.Status
			switch {
			case e.Tools != nil:
				status = fmt.Sprintf("ready, %d tools", *e.Tools)
			case e.Error != "":
				status = "failed: " + oneLine(e.Error, 80)
			}
			line += "\t" + status
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// describeServer is a server's entry, from its configuration and the
// stored grants.
func describeServer(sc *host.ServerConfig, grants []oauth.GrantInfo, now time.Time) serverEntry {
	e := serverEntry{Name: sc.Name, Transport: sc.Type, Auth: authInfo{State: "none"}}
	if sc.URL == "" {
		e.Command = sc.Target()
		if e.Transport == "" {
			e.Transport = "stdio"
		}
		return e
	}
	e.URL = sc.Target()
	if e.Transport == "" {
		e.Transport = "http"
	}
	switch {
	case !sc.UsesOAuth():
		if sc.OAuth == nil || sc.OAuth.Enabled == nil || *sc.OAuth.Enabled {
			e.Auth.State = "header"
		}
		return e
	case sc.ClientCredentials():
		e.Auth = authInfo{State: "client_credentials", ClientID: sc.OAuth.ClientID}
		return e
	}
	resource, err := oauth.CanonicalResource(sc.URL)
	if err != nil {
		return e
	}
	gi := findGrant(grants, resource)
	switch {
	case gi == nil && sc.OAuth != nil:
		e.Auth.State = "login_needed"
	case gi == nil:
	case !gi.Refreshable && !gi.Expiry.IsZero() && !gi.Expiry.After(now):
		e.Auth = authInfo{State: "login_needed", Subject: gi.Subject, Expiry: gi.Expiry}
	default:
		e.Auth = authInfo{State: "logged_in", Subject: gi.Subject, Expiry: gi.Expiry, Refreshable: gi.Refreshable,
			Scopes: gi.Scopes, Issuer: gi.Issuer, ClientID: gi.ClientID}
	}
	return e
}

// authText is the AUTH column.
func authText(e serverEntry, loginCommand string, now time.Time) string {
	a := e.Auth
	switch a.State {
	case "logged_in":
		return "logged in" + describeGrant(oauth.GrantInfo{Subject: a.Subject, Expiry: a.Expiry, Refreshable: a.Refreshable, Scopes: a.Scopes}, now)
	case "login_needed":
		msg := "login needed: " + fmt.Sprintf(loginCommand, shellQuote(e.Name))
		if !a.Expiry.IsZero() {
			msg = fmt.Sprintf("login expired %s: %s", a.Expiry.Local().Format("2006-01-02 15:04"), fmt.Sprintf(loginCommand, shellQuote(e.Name)))
		}
		return msg
	case "client_credentials":
		return "client credentials"
	case "header":
		return "header"
	}
	return "-"
}
