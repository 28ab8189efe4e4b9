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
	// meta is the encoding of a _meta holding only value (under
	// MetaServerInfo), as jsonvalue.Append writes it.
	meta []byte
}

// serverInfoValue returns s.Info as a modern result's _meta carries it
// under MetaServerInfo. Without icons it is made once and shared while
// Info stays the same (read it, never modify it); with icons it is Info
// itself, which encoding/json writes.
func (s *Server) serverInfoValue() any {
	if c := s.serverInfoJSON(); c != nil {
		return c.value
	}
	return s.Info
}

// serverInfoJSON returns s.Info as plain JSON values and a _meta of them,
// made once while Info stays the same; nil when Info has icons.
func (s *Server) serverInfoJSON() *infoJSON {
	info := s.Info
	if len(info.Icons) > 0 {
		return nil
	}
	if c := s.infoJSON.Load(); c != nil && c.info.Name == info.Name && c.info.Title == info.Title &&
		c.info.Version == info.Version && c.info.Description == info.Description && c.info.WebsiteURL == info.WebsiteURL {
		return c
	}
	b, _ := json.Marshal(info) // strings only: it cannot fail
	v, _ := jsonvalue.Decode(b)
	meta, _ := jsonvalue.Append(nil, map[string]any{MetaServerInfo: v})
	c := &infoJSON{info: info, value: v, meta: meta}
	s.infoJSON.Store(c)
	return c
}
