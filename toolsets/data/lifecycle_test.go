package data

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestKilledMidSave: a replica (`toolwire serve data --http --data-dir`)
// killed with SIGKILL while it writes a table leaves the .parquet.tmp it
// was writing; the next replica to start sweeps it once it is older than
// any write lasts (staleWrite), and leaves alone one that a live replica
// may still be writing.
func TestKilledMidSave(t *testing.T) {
	work, dataDir, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	var b strings.Builder
	b.WriteString("id,name\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "%d,name %d\n", i, i)
	}
	must(t, os.WriteFile(filepath.Join(work, "big.csv"), []byte(b.String()), 0o644))
	env := []string{"TMPDIR=" + tmp}
	s := startServerEnv(t, work, env, "--data-dir", dataDir)
	alice := connect(t, s.url, "alice")
	h, _ := tableOf(t, mustTool(t, alice, "load_csv", map[string]any{"path": "big.csv"}))

	// A query whose result takes long to write: 2.7e10 rows.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		args, _ := json.Marshal(map[string]any{"sql": "SELECT a.id, b.name, c.id AS c FROM big a, big b, big c", "tables": map[string]string{"big": h}})
		_, _ = alice.CallTool(ctx, "query", args) // fails when the server dies
	}()
	var leftover string
	for range 600 { // until the write starts: at most 60 s
		if m, _ := filepath.Glob(filepath.Join(dataDir, "*.parquet.tmp")); len(m) > 0 {
			leftover = m[0]
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if leftover == "" {
		t.Fatal("the query wrote no .parquet.tmp in the data directory")
	}
	s.kill()
	cancel()
	if _, err := os.Stat(leftover); err != nil {
		t.Fatalf("the killed replica left no %s: %v", leftover, err)
	}
	killedTemp := tempDirs(t, tmp)
	if len(killedTemp) != 1 {
		t.Fatalf("temporary directories of the killed replica: %v", killedTemp)
	}
	// As time would: what the killed replica left is two hours old.
	// Another file is being written now by a live replica.
	old := time.Now().Add(-2 * time.Hour)
	must(t, os.Chtimes(leftover, old, old))
	must(t, os.Chtimes(killedTemp[0], old, old))
	live := filepath.Join(dataDir, "t_"+strings.Repeat("0", 24)+".parquet.tmp")
	must(t, os.WriteFile(live, []byte("PAR1"), 0o644))
	// Directories the sweep leaves: one just made, not locked yet, and
	// an old one without a lock file (not a toolset's).
	unlocked, noLock := filepath.Join(tmp, "toolwire-data-new"), filepath.Join(tmp, "toolwire-data-other")
	must(t, os.Mkdir(unlocked, 0o700))
	must(t, os.WriteFile(filepath.Join(unlocked, ".lock"), nil, 0o600))
	must(t, os.Mkdir(noLock, 0o700))
	must(t, os.Chtimes(noLock, old, old))

	s2 := startServerEnv(t, work, env, "--data-dir", dataDir)
	if _, err := os.Stat(leftover); err == nil {
		t.Errorf("the next replica to start left %s, two hours old", leftover)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the next replica removed %s, which a live replica is writing: %v", live, err)
	}
	for _, d := range []string{unlocked, noLock} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("the next replica removed %s: %v", d, err)
		}
		must(t, os.RemoveAll(d))
	}
	liveTemp := tempDirs(t, tmp)
	if len(liveTemp) != 1 || liveTemp[0] == killedTemp[0] {
		t.Errorf("temporary directories after the next start: %v; want the killed replica's (%s) gone", liveTemp, killedTemp[0])
	}
	bob := connect(t, s2.url, "bob")
	mustTool(t, bob, "load_csv", map[string]any{"path": "big.csv"})

	// A third replica leaves the live one's directory, however old.
	must(t, os.Chtimes(liveTemp[0], old, old))
	startServerEnv(t, work, env, "--data-dir", dataDir)
	if all := tempDirs(t, tmp); len(all) != 2 || !slices.Contains(all, liveTemp[0]) {
		t.Errorf("temporary directories with two replicas running: %v; want %s kept", all, liveTemp[0])
	}
}

// tempDirs lists the toolsets' temporary directories in dir.
func tempDirs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "toolwire-data-*"))
	must(t, err)
	return m
}
