package main

import (
	"runtime/debug"
	"time"
)

// fromSource is the version of a build that knows neither its module
// version nor its commit: built from a copy of the source without its
// VCS directory, or with -buildvcs=false.
const fromSource = "built from source"

// readBuildInfo is what a binary knows of its build, from the version
// set with -ldflags (release builds; "" for none) and the build
// information bi (nil when the binary has none). The version is, in this
// order: the -ldflags version; the main module's version when the go
// command knew it (a tagged release, or the pseudo-version of `go install
// …@commit`, which Go 1.24 on also stamps from a checkout's VCS); a
// pseudo-version made of the commit stamped (v0.0.0-TIME-REVISION, with
// +dirty for a modified work tree) for a build from a checkout that Go
// left "(devel)"; else "built from source". Hosts show it as the MCP
// server's serverInfo.version.
func readBuildInfo(ldflags string, bi *debug.BuildInfo, goVersion string) buildInfo {
	v := buildInfo{Version: ldflags, Go: goVersion}
	if bi == nil {
		if v.Version == "" {
			v.Version = "unknown"
		}
		return v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.Time = s.Value
		}
	}
	switch {
	case v.Version != "":
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		v.Version = bi.Main.Version
	case v.Commit != "":
		v.Version = pseudoVersion(v)
	default:
		v.Version = fromSource
	}
	return v
}

// pseudoVersion writes the commit of v as Go writes a pseudo-version:
// v0.0.0-20261126113921-abcdef123456, +dirty when modified; without the
// commit's time, devel-abcdef123456.
func pseudoVersion(v buildInfo) string {
	rev := v.Commit[:min(12, len(v.Commit))]
	s := "devel-" + rev
	if t, err := time.Parse(time.RFC3339, v.Time); err == nil {
		s = "v0.0.0-" + t.UTC().Format("20060102150405") + "-" + rev
	}
	if v.Modified {
		s += "+dirty"
	}
	return s
}
