//go:build !unix

package mcptest

import "errors"

// freeze needs job-control signals, which this system does not have.
func freeze() error { return errors.New("freeze is not supported on this system") }

// killSelf needs signals, which this system does not have.
func killSelf() error { return errors.New("killing by signal is not supported on this system") }
