package tool_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// optimizeSchema is the function declaration of optimize_structure, a tool
// with defaults and system parameters, as a remote
// server would publish it (shared with the workflow package's tests).
func optimizeSchema(t *testing.T) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "optimize_structure.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// configured is the host configuration's inject block for the tool.
const configured = `{"executor":{"type":"dispatcher","machine":"c32_m64_cpu"},"storage":{"type":"https","plugin":"bohrium"}}`

func newOptimize(t *testing.T, got *map[string]any) tool.Tool {
	t.Helper()
	var values map[string]any
	if err := json.Unmarshal([]byte(configured), &values); err != nil {
		t.Fatal(err)
	}
	modelSchema, err := tool.HideParameters(optimizeSchema(t), []string{"executor", "storage"})
	if err != nil {
		t.Fatal(err)
	}
	// A tool whose host injects executor and storage, as a remote tool
	// configured with "inject" is.
	return tool.NewFunc(
		tool.Info{Name: "optimize_structure", Description: "Perform geometry optimization...", InputSchema: modelSchema,
			Injected: []string{"executor", "storage"}, InjectedValues: values},
		func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			*got = nil
			if err := json.Unmarshal(args, got); err != nil {
				return nil, err
			}
			return tool.Text("optimized"), nil
		})

}

// TestInjectedCompletesArguments: the model fills three arguments; the
// pipeline completes the call with the schema's defaults and the host's
// injected parameters.
func TestInjectedCompletesArguments(t *testing.T) {
	var got map[string]any
	var reg tool.Registry
	opt := newOptimize(t, &got)
	if err := reg.Add(opt); err != nil {
		t.Fatal(err)
	}
	// What the model sees has no executor or storage.
	if s := string(opt.Info().InputSchema); strings.Contains(s, "executor") || strings.Contains(s, "storage") {
		t.Fatalf("model-facing schema shows injected parameters: %s", s)
	}

	modelArgs := `{"input_structure":"https://example.test/Cu_bulk.cif","model_path":"https://example.test/dpa-2.4-7M.pt","relax_cell":false}`
	want := map[string]any{
		"input_structure": "https://example.test/Cu_bulk.cif",
		"model_path":      "https://example.test/dpa-2.4-7M.pt",
		"relax_cell":      false,
		"head":            "Omat24",
		"force_tolerance": 0.01,
		"max_iterations":  float64(100),
		"executor":        map[string]any{"type": "dispatcher", "machine": "c32_m64_cpu"},
		"storage":         map[string]any{"type": "https", "plugin": "bohrium"},
	}
	ctx := context.Background()
	if _, err := reg.Call(ctx, "optimize_structure", json.RawMessage(modelArgs)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("completed arguments:\n got %v\nwant %v", got, want)
	}

	// A model that sends storage has it replaced by the host's.
	sneaky := `{"input_structure":"a.cif","model_path":"m.pt","storage":{"type":"s3","bucket":"attacker"}}`
	if _, err := reg.Call(ctx, "optimize_structure", json.RawMessage(sneaky)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["storage"], want["storage"]) {
		t.Errorf("storage = %v, want the host's %v", got["storage"], want["storage"])
	}

	// Without model_path the call is refused, naming what is missing.
	_, err := reg.Call(ctx, "optimize_structure", json.RawMessage(`{"input_structure":"a.cif"}`))
	var ae *tool.ArgumentsError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not an *ArgumentsError", err)
	}
	if !slices.Equal(ae.Missing, []string{"model_path"}) || len(ae.Problems) != 0 {
		t.Errorf("Missing = %v, Problems = %v; want [model_path] only", ae.Missing, ae.Problems)
	}
	if !strings.Contains(err.Error(), `missing required argument "model_path"`) {
		t.Errorf("message %q does not name the missing argument", err)
	}
}

// The same completion with a typed Go tool: defaults and the injected
// parameters come from struct tags.
type optimizeArgs struct {
	InputStructure string         `json:"input_structure" description:"Input structure file URL or path"`
	ModelPath      string         `json:"model_path" description:"Path to the DPA model file"`
	Head           string         `json:"head" description:"Model head type" jsonschema:"default=Omat24"`
	ForceTolerance float64        `json:"force_tolerance" description:"Force convergence tolerance" jsonschema:"default=0.01"`
	MaxIterations  int            `json:"max_iterations" description:"Maximum optimization iterations" jsonschema:"default=100"`
	RelaxCell      bool           `json:"relax_cell" description:"Whether to relax cell parameters" jsonschema:"default=false"`
	Executor       map[string]any `json:"executor" tool:"inject"`
	Storage        map[string]any `json:"storage" tool:"inject"`
}

// TestInjectedTypedTool: a typed tool's tool:"inject" fields are filled by
// the host, never by the model, whatever the model sends.
func TestInjectedTypedTool(t *testing.T) {
	var got optimizeArgs
	opt := tool.Must(tool.New("optimize_structure", "Perform geometry optimization...",
		func(_ context.Context, in optimizeArgs) (string, error) {
			got = in
			return "optimized", nil
		}))
	var reg tool.Registry
	if err := reg.Add(opt); err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	_ = json.Unmarshal([]byte(configured), &values)
	ctx := tool.WithInjected(context.Background(), values)
	sneaky := `{"input_structure":"a.cif","model_path":"m.pt","relax_cell":false,"storage":{"bucket":"attacker"}}`
	if _, err := reg.Call(ctx, "optimize_structure", json.RawMessage(sneaky)); err != nil {
		t.Fatal(err)
	}
	want := optimizeArgs{InputStructure: "a.cif", ModelPath: "m.pt", Head: "Omat24", ForceTolerance: 0.01, MaxIterations: 100,
		Executor: values["executor"].(map[string]any), Storage: values["storage"].(map[string]any)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("typed arguments:\n got %+v\nwant %+v", got, want)
	}
	if _, err := reg.Call(context.Background(), "optimize_structure", json.RawMessage(`{"input_structure":"a.cif","model_path":"m.pt"}`)); !errors.Is(err, tool.ErrFatal) ||
		!strings.Contains(err.Error(), "executor") {
		t.Errorf("a call without injected values should fail fatally, naming them; got %v", err)
	}
}

// A run context carries the table between tools; the model only ever
// reads sentences about it.
type dataRun struct {
	Table [][]string
}

type extractArgs struct {
	FilePath string `json:"file_path" description:"Path of the CSV file to load"`
}

func tableTools() []tool.Tool {
	extract := tool.Must(tool.New("extract_data", "Loads a CSV file into the run's workspace",
		func(ctx context.Context, in extractArgs) (string, error) {
			run, ok := tool.RunContext[dataRun](ctx)
			if !ok {
				return "", errors.New("no run context")
			}
			f, err := os.Open(in.FilePath)
			if err != nil {
				return "", err
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil {
				return "", err
			}
			run.Table = rows
			return fmt.Sprintf("Loaded %d rows from %s.", len(rows)-1, in.FilePath), nil
		}))
	drop := tool.Must(tool.New("drop_missing", "Drops the rows of the loaded table that have empty cells",
		func(ctx context.Context, _ struct{}) (string, error) {
			run, ok := tool.RunContext[dataRun](ctx)
			if !ok || run.Table == nil {
				return "", errors.New("no table loaded: call extract_data first")
			}
			kept := run.Table[:1]
			for _, row := range run.Table[1:] {
				if !slices.Contains(row, "") {
					kept = append(kept, row)
				}
			}
			dropped := len(run.Table) - len(kept)
			run.Table = kept
			return fmt.Sprintf("Dropped %d rows with missing values; %d remain.", dropped, len(kept)-1), nil
		}))
	return []tool.Tool{extract, drop}
}

func TestRunContextCarriesTable(t *testing.T) {
	var reg tool.Registry
	if err := reg.Add(tableTools()...); err != nil {
		t.Fatal(err)
	}
	for _, tl := range reg.Tools() {
		if strings.Contains(string(tl.Info().InputSchema), "Table") || strings.Contains(string(tl.Info().InputSchema), "run") {
			t.Errorf("%s's schema mentions the run context: %s", tl.Info().Name, tl.Info().InputSchema)
		}
	}
	run := &dataRun{}
	ctx := tool.WithRunContext(context.Background(), run)
	var toModel []string
	for _, call := range []struct{ name, args string }{
		{"extract_data", `{"file_path":"testdata/measurements.csv"}`},
		{"drop_missing", ``},
	} {
		res, err := reg.Call(ctx, call.name, json.RawMessage(call.args))
		if err != nil {
			t.Fatalf("%s: %v", call.name, err)
		}
		b, _ := json.Marshal(res)
		toModel = append(toModel, string(b))
	}
	if want := [][]string{{"station", "temperature", "humidity"}, {"alpha", "21.5", "40"}, {"delta", "22.1", "45"}}; !reflect.DeepEqual(run.Table, want) {
		t.Errorf("table after drop_missing = %v, want %v", run.Table, want)
	}
	all := strings.Join(toModel, "\n")
	for _, cell := range []string{"alpha", "bravo", "21.5", "temperature"} {
		if strings.Contains(all, cell) {
			t.Errorf("the model would read table data (%q) in: %s", cell, all)
		}
	}
	if !strings.Contains(toModel[0], "Loaded 4 rows") || !strings.Contains(toModel[1], "Dropped 2 rows") {
		t.Errorf("tool results = %v", toModel)
	}
}
