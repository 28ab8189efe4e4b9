package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/internal/otelsdk"
)

// withTelemetry makes cmd start the OpenTelemetry SDK as the OTEL_*
// variables say before it runs (g.tel, nil when they ask for nothing),
// and flush it, within a bound, when it ends.
func withTelemetry(g *globalOptions, cmd *cobra.Command) *cobra.Command {
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		sdk, err := otelsdk.Start(cmd.Context(), otelsdk.Options{Getenv: os.Getenv, Warn: cmd.ErrOrStderr()})
		if err != nil {
			return err
		}
		defer func() { _ = sdk.Shutdown() }()
		g.tel = sdk.Config
		return run(cmd, args)
	}
	return cmd
}
