package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/qoslab/qoslab/internal/doctor"
	"github.com/qoslab/qoslab/internal/hv"
)

// TestDoctorMark: only what a run needs and lacks is MISSING (and fails
// doctor); a KVM that is there but unusable is a warning, and an optional
// tool that is not installed is absent, not ok.
func TestDoctorMark(t *testing.T) {
	for _, tt := range []struct {
		name  string
		check doctor.Check
		want  string
	}{
		{"present", doctor.Check{Check: hv.Check{OK: true}}, "ok"},
		{"needed and missing", doctor.Check{Check: hv.Check{}}, "MISSING"},
		{"unusable KVM", doctor.Check{Check: hv.Check{OK: true, Warn: true}}, "warn"},
		{"optional, not installed", doctor.Check{Check: hv.Check{OK: true, Absent: true}}, "absent"},
		{"not for this platform", doctor.Check{Check: hv.Check{OK: true}, NotApplicable: true}, "n/a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, doctorMark(tt.check))
		})
	}
}
