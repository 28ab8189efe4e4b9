package toolsearch

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// referenceTools are the tools of the three npm reference servers
// (server-everything, server-filesystem, server-memory, 2026.8.31) and of
// toolwire's calc and data toolsets, as `toolwire tools --json` listed
// them with each configured as a server.
func referenceTools(t testing.TB) []tool.Info {
	t.Helper()
	b, err := os.ReadFile("testdata/reference_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var infos []tool.Info
	if err := json.Unmarshal(b, &infos); err != nil {
		t.Fatal(err)
	}
	if len(infos) < 50 {
		t.Fatalf("testdata/reference_tools.json has %d tools", len(infos))
	}
	return infos
}

// TestRanking: realistic requests find the right tool first among the
// reference servers' 52 tools.
func TestRanking(t *testing.T) {
	ix := New(referenceTools(t))
	tests := []struct {
		query, want string
	}{
		{"read a text file", "filesystem__read_text_file"},
		{"write content to a file", "filesystem__write_file"},
		{"list the files in a directory", "filesystem__list_directory"},
		{"rename a file", "filesystem__move_file"},
		{"create a new directory", "filesystem__create_directory"},
		{"find files matching a glob pattern", "filesystem__search_files"},
		{"file size and modification time metadata", "filesystem__get_file_info"},
		{"image or audio file as base64", "filesystem__read_media_file"},
		{"add two numbers sum", "everything__get-sum"},
		{"echo back a message", "everything__echo"},
		{"environment variables", "everything__get-env"},
		{"gzip compress", "everything__gzip-file-as-resource"},
		{"long running operation with progress", "everything__trigger-long-running-operation"},
		{"remember a fact about a person: add observations", "memory__add_observations"},
		{"create entities in the knowledge graph", "memory__create_entities"},
		{"delete relations", "memory__delete_relations"},
		{"search nodes of the knowledge graph", "memory__search_nodes"},
		{"evaluate an arithmetic expression", "calc__calculate"},
		{"what time is it in Tokyo timezone", "calc__now"},
		{"convert a time between time zones", "calc__convert_time"},
		{"days between two dates", "calc__time_between"},
		{"load a CSV file as a table", "data__load_csv"},
		{"drop rows with missing values", "data__drop_missing"},
		{"SQL select query over tables", "data__query"},
		{"group by and aggregate", "data__group_by"},
		{"save table as parquet", "data__save_parquet"},
		{"sort rows by column", "data__sort"},
		// camelCase, snake_case and a server's prefix in the query.
		{"readTextFile", "filesystem__read_text_file"},
		{"create_directory", "filesystem__create_directory"},
		{"memory read graph", "memory__read_graph"},
		// A tool's exact name comes first, with or without its prefix.
		{"filesystem__read_file", "filesystem__read_file"},
		{"get-tiny-image", "everything__get-tiny-image"},
		{"head", "data__head"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits := ix.Search(tt.query, 5)
			if len(hits) == 0 || hits[0].Name != tt.want {
				t.Errorf("Search(%q) = %v, want %s first", tt.query, hits, tt.want)
			}
		})
	}
}

func TestSearchBounds(t *testing.T) {
	ix := New(referenceTools(t))
	everything := func() string { // a query with a word of every tool
		var b strings.Builder
		for _, info := range referenceTools(t) {
			b.WriteString(strings.ReplaceAll(info.Name, "__", " ") + " ")
		}
		return b.String()
	}()
	tests := []struct {
		name    string
		query   string
		k, want int
	}{
		{"nothing matches", "zebra xylophone quantum", 5, 0},
		{"empty query", "", 5, 0},
		{"only punctuation and stopwords", " -- the a of __ ", 5, 0},
		{"default k", "file", 0, DefaultResults},
		{"k bounds the hits", "file", 3, 3},
		{"everything matches: still k", everything, 7, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := ix.Search(tt.query, tt.k)
			if len(hits) != tt.want {
				t.Errorf("Search(%.40q, %d) gave %d hits, want %d: %v", tt.query, tt.k, len(hits), tt.want, hits)
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Errorf("hits out of order: %v", hits)
				}
			}
		})
	}
}

// TestMaxResults: however large k, a search returns at most MaxResults.
func TestMaxResults(t *testing.T) {
	ix := New(generated(200))
	if n := len(ix.Search("generated tool", 1000)); n != MaxResults {
		t.Errorf("got %d hits, want MaxResults (%d)", n, MaxResults)
	}
}

// TestHugeQuery: a query of megabytes is cut to MaxQueryBytes and
// MaxQueryWords, quickly, and the answer says so.
func TestHugeQuery(t *testing.T) {
	ix := New(referenceTools(t))
	var b strings.Builder
	for i := 0; b.Len() < 4<<20; i++ {
		fmt.Fprintf(&b, "zz%c%c ", 'a'+i%26, 'a'+i/26%26)
	}
	huge := "read text file " + b.String()
	a := ix.Answer(huge, 5)
	if !strings.Contains(a.Text, "cut to its first") || len(a.Hits) == 0 || a.Hits[0].Name != "filesystem__read_text_file" {
		t.Errorf("Answer of a 4 MiB query: %v\n%s", a.Hits, a.Text)
	}
	// A query of megabytes of one word is cut too: its words are few,
	// but reading them all would take time.
	a = ix.Answer("gzip "+strings.Repeat("gzip ", 1<<20), 5)
	if !strings.Contains(a.Text, "cut to its first") || len(a.Hits) != 1 {
		t.Errorf("Answer of a 5 MiB query of one word: %v\n%s", a.Hits, a.Text)
	}
	// Words past MaxQueryWords are not searched for, even within
	// MaxQueryBytes.
	var q []string
	for i := range MaxQueryWords {
		q = append(q, fmt.Sprintf("w%c%c", 'a'+i/26, 'a'+i%26))
	}
	q = append(q, "gzip")
	if a := ix.Answer(strings.Join(q, " "), 5); len(a.Hits) != 0 || !strings.Contains(a.Text, "cut to") {
		t.Errorf("the word after MaxQueryWords was searched for: %v\n%s", a.Hits, a.Text)
	}
}

func TestAnswer(t *testing.T) {
	ix := New(referenceTools(t))
	a := ix.Answer("read a text file", 2)
	if len(a.Hits) != 2 || !strings.Contains(a.Text, "2 of 52 tools match") ||
		!strings.Contains(a.Text, "- filesystem__read_text_file: Read the complete contents of a file from the file system as text.") ||
		!strings.Contains(a.Text, "(parameters: head, path, tail)") {
		t.Errorf("Answer:\n%s", a.Text)
	}
	for _, q := range []string{"zebra xylophone", ""} {
		a = ix.Answer(q, 5)
		if len(a.Hits) != 0 || !strings.Contains(a.Text, "Try other words") ||
			!strings.Contains(a.Text, "a server's name: calc, data, everything, filesystem, memory") ||
			!strings.Contains(a.Text, "Some of the 52 tools: calc__calculate") {
			t.Errorf("Answer(%q):\n%s", q, a.Text)
		}
	}
	if a := ix.Answer("", 5); !strings.HasPrefix(a.Text, "The query has no words") {
		t.Errorf("empty query: %s", a.Text)
	}
	if a := New(nil).Answer("file", 5); a.Text != "No tools are available." {
		t.Errorf("empty index: %s", a.Text)
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"filesystem__read_text_file", []string{"filesystem", "read", "text", "fil"}},
		{"getTinyImage", []string{"get", "tiny", "imag"}},
		{"list-directory-with-sizes", []string{"list", "directory", "siz"}},
		{"Files listed, listing; created creating CREATE", []string{"fil", "list", "list", "creat", "creat", "creat"}},
		{"entities searches boxes", []string{"entity", "search", "box"}},
		{"utf8 Größe", []string{"utf", "8", "größ"}},
		{"string status", []string{"string", "status"}},
	}
	for _, tt := range tests {
		if got := terms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIndexDuplicatesAndInfo(t *testing.T) {
	ix := New([]tool.Info{{Name: "a", Description: "first"}, {Name: "a", Description: "second"}, {Name: "b"}})
	if ix.Len() != 2 {
		t.Fatalf("Len = %d, want 2", ix.Len())
	}
	if info, ok := ix.Info("a"); !ok || info.Description != "first" {
		t.Errorf("Info(a) = %+v, %v", info, ok)
	}
	if _, ok := ix.Info("c"); ok {
		t.Error("Info(c) found a tool")
	}
	ft := FromTools([]tool.Tool{tool.NewFunc(tool.Info{Name: "x__y"}, nil)})
	if ft.Len() != 1 || !slices.Equal(ft.Servers(), []string{"x"}) {
		t.Errorf("FromTools: %d tools, servers %v", ft.Len(), ft.Servers())
	}
}

// generated makes n tools of a synthetic catalog: services × verbs ×
// objects, with parameters.
func generated(n int) []tool.Info {
	services := []string{"github", "slack", "jira", "sentry", "stripe", "notion", "linear", "gmail", "calendar", "drive"}
	verbs := []string{"create", "get", "list", "update", "delete", "search", "archive", "assign", "comment_on", "export"}
	objects := []string{"issue", "message", "ticket", "event", "invoice", "page", "project", "email", "file", "user"}
	out := make([]tool.Info, 0, n)
	for i := 0; len(out) < n; i++ {
		// Every object early on: o shifts with each round of services × verbs.
		s, v, o := services[i%10], verbs[i/10%10], objects[(i/100+i)%10]
		name := fmt.Sprintf("%s__%s_%s", s, v, o)
		if i >= len(services)*len(verbs)*len(objects) {
			name += fmt.Sprint(i)
		}
		schema := fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"The %s's id in %s."},"note":{"type":"string","description":"Free text kept with the change."}},"required":["%s_id"]}`, o, o, s, o)
		out = append(out, tool.Info{
			Name:        name,
			Description: fmt.Sprintf("Generated tool: %s a %s in %s. Returns the %s as JSON.", strings.ReplaceAll(v, "_", " "), o, s, o),
			InputSchema: json.RawMessage(schema),
		})
	}
	return out
}

func TestGeneratedCatalog(t *testing.T) {
	ix := New(generated(500))
	for q, want := range map[string]string{
		"create a jira ticket":       "jira__create_ticket",
		"archive slack message":      "slack__archive_message",
		"search stripe invoices":     "stripe__search_invoice",
		"comment on a github issue":  "github__comment_on_issue",
		"delete a page from notion":  "notion__delete_page",
		"gmail__export_email":        "gmail__export_email",
		"update the linear project.": "linear__update_project",
	} {
		if hits := ix.Search(q, 3); len(hits) == 0 || hits[0].Name != want {
			t.Errorf("Search(%q) = %v, want %s first", q, hits, want)
		}
	}
}

func BenchmarkNew500(b *testing.B) {
	infos := generated(500)
	b.ReportAllocs()
	for b.Loop() {
		New(infos)
	}
}

func BenchmarkSearch500(b *testing.B) {
	ix := New(generated(500))
	b.ReportAllocs()
	for b.Loop() {
		ix.Search("comment on a github issue", 5)
	}
}

func BenchmarkNewAndSearchReference(b *testing.B) {
	infos := referenceTools(b)
	b.ReportAllocs()
	for b.Loop() {
		New(infos).Search("read a text file", 5)
	}
}
