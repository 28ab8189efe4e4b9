package handle_test

import (
	"testing"

	"github.com/toolwire/toolwire/handle"
)

// BenchmarkResolve is one handle resolution per call, in memory, among
// 10,000 live handles.
func BenchmarkResolve(b *testing.B) {
	s := &handle.Memory{}
	ctx := as("token:bench")
	var ids []string
	for i := range 10000 {
		h, err := handle.Put(ctx, s, &table{Rows: i}, 1)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, h.ID)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := handle.Resolve[*table](ctx, s, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
