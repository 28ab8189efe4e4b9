package mcp

import (
	"encoding/json"

	"github.com/toolwire/toolwire/internal/jsonvalue"
)

// infoJSON is a server's Info as plain JSON values (maps, strings), which
// a result's _meta encodes without reflection.
type infoJSON struct {
	info  Implementation // what it was made from (without icons)
	value any
}

// serverInfoValue returns s.Info as a modern result's _meta carries it
// under MetaServerInfo. Without icons it is made once and shared while
// Info stays the same (read it, never modify it); with icons it is Info
// itself, which encoding/json writes.
func (s *Server) serverInfoValue() any {
	info := s.Info
	if len(info.Icons) > 0 {
		return info
	}
	if c := s.infoJSON.Load(); c != nil && c.info.Name == info.Name && c.info.Title == info.Title &&
		c.info.Version == info.Version && c.info.Description == info.Description && c.info.WebsiteURL == info.WebsiteURL {
		return c.value
	}
	b, _ := json.Marshal(info) // strings only: it cannot fail
	v, _ := jsonvalue.Decode(b)
	s.infoJSON.Store(&infoJSON{info: info, value: v})
	return v
}
