package tool

// The argument pipeline, for the package's external tests (fuzzing and
// benchmarks): it is not part of the API.
type Pipeline = pipeline

// NewPipeline is newPipeline, for the external tests.
var NewPipeline = newPipeline
