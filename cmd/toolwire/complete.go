package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// nameCacheTTL is how long listed names serve shell completion: long
// enough for a session at the prompt, short enough to follow the servers.
const nameCacheTTL = 10 * time.Minute

// nameCache keeps the names of each server's tools and prompts, as the
// last command that listed them saw them, so that shell completion never
// starts a server. It lives in the user's cache directory; failing to read
// or write it only makes completion poorer.
type nameCache struct {
	path   string // the cache file; "" when there is no cache directory
	config string // the configuration file the names belong to
}

// cacheEntry is one server's names of one kind.
type cacheEntry struct {
	Time  time.Time `json:"time"`
	Names []string  `json:"names"`
}

// cacheFile is the file's content: by configuration file, kind ("tools",
// "prompts") and server.
type cacheFile map[string]map[string]map[string]cacheEntry

func newNameCache(config string) *nameCache {
	c := &nameCache{config: config}
	if dir, err := os.UserCacheDir(); err == nil {
		c.path = filepath.Join(dir, "toolwire", "names.json")
	}
	if abs, err := filepath.Abs(config); err == nil {
		c.config = abs
	}
	return c
}

func (c *nameCache) read() cacheFile {
	f := cacheFile{}
	if b, err := os.ReadFile(c.path); err == nil {
		_ = json.Unmarshal(b, &f)
	}
	return f
}

// save records the names of a kind for the servers in byServer.
func (c *nameCache) save(kind string, byServer map[string][]string) {
	if c.path == "" || len(byServer) == 0 {
		return
	}
	f := c.read()
	if f[c.config] == nil {
		f[c.config] = map[string]map[string]cacheEntry{}
	}
	if f[c.config][kind] == nil {
		f[c.config][kind] = map[string]cacheEntry{}
	}
	now := time.Now()
	for server, names := range byServer {
		f[c.config][kind][server] = cacheEntry{Time: now, Names: names}
	}
	b, err := json.Marshal(f)
	if err != nil || os.MkdirAll(filepath.Dir(c.path), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), "names-*.json")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), c.path) != nil {
		os.Remove(tmp.Name())
	}
}

// load returns the fresh names of a kind, by server.
func (c *nameCache) load(kind string) map[string][]string {
	out := map[string][]string{}
	if c.path == "" {
		return out
	}
	for server, e := range c.read()[c.config][kind] {
		if time.Since(e.Time) < nameCacheTTL {
			out[server] = e.Names
		}
	}
	return out
}

// completeServers completes configured server names, from the
// configuration alone.
func (o *hostOptions) completeServers(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cfg, err := o.loadConfig(io.Discard)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for name := range cfg.Servers {
		if strings.HasPrefix(name, toComplete) && !slices.Contains(args, name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeNames completes tool or prompt names (kind "tools" or
// "prompts") of the first argument from the cache; a server whose names
// are not cached offers its prefix ("server__") to type on from.
func (o *hostOptions) completeNames(kind string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := o.loadConfig(io.Discard)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cached := newNameCache(cfg.Path).load(kind)
		dir := cobra.ShellCompDirectiveNoFileComp
		var out []string
		for server, sc := range cfg.Servers {
			names, ok := cached[server]
			if !ok {
				names = []string{sc.ToolPrefix()}
				dir |= cobra.ShellCompDirectiveNoSpace
			}
			for _, n := range names {
				if n != "" && strings.HasPrefix(n, toComplete) {
					out = append(out, n)
				}
			}
		}
		sort.Strings(out)
		return out, dir
	}
}
