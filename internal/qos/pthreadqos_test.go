package qos

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPthreadApplied(t *testing.T) {
	cases := []struct {
		name          string
		asked         Class
		setErr        error
		got           uint32
		relpri        int
		getErr        error
		want          Applied
		reasonHasText string
	}{
		{
			name: "applied", asked: Utility, got: 17,
			want: Applied{Asked: Utility, Applied: Utility, Full: true, Detail: "QOS_CLASS_UTILITY relpri=0"},
		},
		{
			name: "set refused", asked: UserInteractive, setErr: syscall.EPERM, got: 21,
			want:          Applied{Asked: UserInteractive, Applied: Default, Detail: "QOS_CLASS_DEFAULT relpri=0"},
			reasonHasText: "pthread_set_qos_class_self_np(QOS_CLASS_USER_INTERACTIVE, 0): " + syscall.EPERM.Error(),
		},
		{
			name: "reads back as another class", asked: Background, got: 17,
			want:          Applied{Asked: Background, Applied: Utility, Detail: "QOS_CLASS_UTILITY relpri=0"},
			reasonHasText: "thread reads back as QOS_CLASS_UTILITY relpri=0",
		},
		{
			name: "relative priority not zero", asked: Default, got: 21, relpri: -3,
			want:          Applied{Asked: Default, Applied: Default, Detail: "QOS_CLASS_DEFAULT relpri=-3"},
			reasonHasText: "relpri=-3",
		},
		{
			name: "unspecified read back", asked: Default, got: 0,
			want:          Applied{Asked: Default, Applied: Unspecified, Detail: "QOS_CLASS_UNSPECIFIED relpri=0"},
			reasonHasText: "thread reads back as QOS_CLASS_UNSPECIFIED",
		},
		{
			name: "unknown qos_class_t", asked: Default, got: 0x99,
			want:          Applied{Asked: Default, Applied: Unspecified, Detail: "qos_class_t(0x99) relpri=0"},
			reasonHasText: "qos_class_t(0x99)",
		},
		{
			name: "read back fails", asked: Utility, getErr: syscall.ESRCH,
			want:          Applied{Asked: Utility, Applied: Unspecified},
			reasonHasText: "pthread_get_qos_class_np: " + syscall.ESRCH.Error(),
		},
		{
			name: "invalid class", asked: Class(5), got: 21,
			want:          Applied{Asked: Class(5), Applied: Default, Detail: "QOS_CLASS_DEFAULT relpri=0"},
			reasonHasText: "unknown QoS class 5: allowed " + Allowed,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := pthreadApplied(tc.asked, tc.setErr, tc.got, tc.relpri, tc.getErr)
			assert.Contains(t, a.Reason, tc.reasonHasText)
			assert.Equal(t, tc.want.Full, a.Reason == "", "a reason exactly when not Full: %q", a.Reason)
			a.Reason = ""
			assert.Equal(t, tc.want, a)
		})
	}
}
