// Package interop holds tests that run toolwire against other
// implementations of MCP, such as the official TypeScript SDK, to show that
// clients in the wild can use toolwire's server over every transport. It
// has no code of its own: see its tests.
//
// The tests need the pinned npm packages (Node 22 and the SDK) that
// ./scripts/install-test-deps.sh installs into .cache/npm at the module
// root. Without them they skip, unless CI or TOOLWIRE_REQUIRE_NODE=1 is
// set, in which case they fail.
package interop
