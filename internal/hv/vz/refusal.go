package vz

import (
	"errors"
	"fmt"
	"strings"

	"github.com/qoslab/qoslab/internal/signing"
)

// refused is the error of a VM the framework would not validate, create
// or start (what says which, err is the framework's), with what the host
// checks find wrong. A binary without the virtualization entitlement is
// refused whatever the configuration, and the framework's own message
// does not always say so: the entitlement's check comes first, with the
// command that signs the binary.
func refused(what string, err error, checks []signing.Check) error {
	var problems []string
	for _, c := range checks {
		if c.OK {
			continue
		}
		p := c.Name + ": " + c.Detail
		if c.Fix != "" {
			p += " (fix: " + c.Fix + ")"
		}
		if c.Name == signing.CheckNameEntitlement {
			problems = append([]string{p}, problems...)
		} else {
			problems = append(problems, p)
		}
	}
	if err == nil {
		err = errors.New("no reason given")
	}
	if len(problems) == 0 {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w; %s", what, err, strings.Join(problems, "; "))
}
