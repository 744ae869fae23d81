// Package qos names the five QoS classes and applies them to the calling OS thread.
package qos

import (
	"fmt"
	"strconv"
	"strings"
)

// Class is a QoS class by its Darwin number (qos_class_t).
type Class int

// The five classes, numbered as Darwin's qos_class_t.
const (
	Unspecified     Class = 0
	Background      Class = 9
	Utility         Class = 17
	Default         Class = 21
	UserInitiated   Class = 25
	UserInteractive Class = 33
)

// all lists the five classes from lowest to highest.
var all = [...]Class{Background, Utility, Default, UserInitiated, UserInteractive}

var names = map[Class]string{
	Background:      "background",
	Utility:         "utility",
	Default:         "default",
	UserInitiated:   "user-initiated",
	UserInteractive: "user-interactive",
}

// String returns the class's name ("background"), or "unspecified".
func (c Class) String() string {
	if n, ok := names[c]; ok {
		return n
	}
	if c == Unspecified {
		return "unspecified"
	}
	return fmt.Sprintf("qos(%d)", int(c))
}

// Valid reports whether c is one of the five classes.
func (c Class) Valid() bool {
	_, ok := names[c]
	return ok
}

// Names lists the classes by name, lowest first.
func Names() []string {
	var out []string
	for _, c := range all {
		out = append(out, c.String())
	}
	return out
}

// Allowed describes the accepted spellings, for error messages.
const Allowed = "background|9, utility|17, default|21, user-initiated|25, user-interactive|33"

// Parse accepts a class by name or number: "background", "9", "user_interactive", "userInteractive", "33".
func Parse(s string) (Class, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if n, err := strconv.Atoi(t); err == nil {
		c := Class(n)
		if c.Valid() {
			return c, nil
		}
		return Unspecified, fmt.Errorf("unknown QoS class %q: allowed %s", s, Allowed)
	}
	norm := strings.NewReplacer("_", "-", " ", "-").Replace(t)
	for c, n := range names {
		if norm == n || norm == strings.ReplaceAll(n, "-", "") {
			return c, nil
		}
	}
	return Unspecified, fmt.Errorf("unknown QoS class %q: allowed %s", s, Allowed)
}

// ParseList parses a comma-separated list of classes, keeping the order given and dropping repeats.
func ParseList(s string) ([]Class, error) {
	var out []Class
	seen := map[Class]bool{}
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			return nil, fmt.Errorf("empty QoS class in %q: allowed %s", s, Allowed)
		}
		c, err := Parse(f)
		if err != nil {
			return nil, err
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// Applied is what happened when a class was asked for on a thread: the class the
// thread reads back as, and why that differs from what was asked (or what part of
// the OS mapping could not be applied).
type Applied struct {
	Asked   Class  `json:"asked"`
	Applied Class  `json:"applied"` // read back from the OS; Unspecified when it matches no class
	Full    bool   `json:"full"`    // every part of the OS mapping took effect
	Reason  string `json:"reason,omitempty"`
	Detail  string `json:"detail,omitempty"` // the OS-level read-back, e.g. "SCHED_IDLE nice=0"
}

// OK reports whether the thread reads back as the class that was asked for.
func (a Applied) OK() bool { return a.Asked == a.Applied }

// ClassOfLinuxPolicy names the class whose Linux mapping a thread's
// scheduling policy (as sched(7) names it: "SCHED_OTHER") and nice are
// (docs/design.md, "QoS classes"), or Unspecified: how a policy read from
// /proc on any host is told in plain words. SCHED_IDLE is background
// whatever its nice, which it ignores.
func ClassOfLinuxPolicy(policy string, nice int) Class {
	switch {
	case policy == "SCHED_IDLE":
		return Background
	case policy == "SCHED_BATCH" && nice == 10:
		return Utility
	case policy == "SCHED_OTHER" && nice == 0:
		return Default
	case policy == "SCHED_OTHER" && nice == -5:
		return UserInitiated
	case policy == "SCHED_OTHER" && nice == -10:
		return UserInteractive
	}
	return Unspecified
}
