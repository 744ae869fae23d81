package qos

import "fmt"

// Darwin's qos_class_t values are the Class numbers; these names are the
// <sys/qos.h> spellings used in the darwin read-back Detail.
var pthreadQoSNames = map[uint32]string{
	0:                       "QOS_CLASS_UNSPECIFIED",
	uint32(Background):      "QOS_CLASS_BACKGROUND",
	uint32(Utility):         "QOS_CLASS_UTILITY",
	uint32(Default):         "QOS_CLASS_DEFAULT",
	uint32(UserInitiated):   "QOS_CLASS_USER_INITIATED",
	uint32(UserInteractive): "QOS_CLASS_USER_INTERACTIVE",
}

// pthreadQoSDetail formats what pthread_get_qos_class_np returned, e.g.
// "QOS_CLASS_UTILITY relpri=0".
func pthreadQoSDetail(class uint32, relpri int) string {
	name, ok := pthreadQoSNames[class]
	if !ok {
		name = fmt.Sprintf("qos_class_t(%#x)", class)
	}
	return fmt.Sprintf("%s relpri=%d", name, relpri)
}

// pthreadQoSClass maps a qos_class_t read back from Darwin to a Class, or
// Unspecified when it is none of the five.
func pthreadQoSClass(class uint32) Class {
	if c := Class(class); c.Valid() {
		return c
	}
	return Unspecified
}

// pthreadApplied is the result of asking for class asked with
// pthread_set_qos_class_self_np(asked, 0) (setErr: its errno, or nil; not
// called for an invalid class) and reading the thread back with
// pthread_get_qos_class_np (got, relpri; getErr: its errno, or nil). It is
// portable so it is tested on every OS; the darwin file only makes the calls.
func pthreadApplied(asked Class, setErr error, got uint32, relpri int, getErr error) Applied {
	a := Applied{Asked: asked}
	var reason string
	switch {
	case !asked.Valid():
		reason = fmt.Sprintf("unknown QoS class %d: allowed %s", int(asked), Allowed)
	case setErr != nil:
		reason = fmt.Sprintf("pthread_set_qos_class_self_np(%s, 0): %v", pthreadQoSNames[uint32(asked)], setErr)
	}
	if getErr != nil {
		if reason != "" {
			reason += "; "
		}
		a.Reason = reason + fmt.Sprintf("pthread_get_qos_class_np: %v", getErr)
		return a
	}
	a.Applied = pthreadQoSClass(got)
	a.Detail = pthreadQoSDetail(got, relpri)
	if reason == "" && (a.Applied != asked || relpri != 0) {
		reason = "thread reads back as " + a.Detail
	}
	a.Full = reason == ""
	a.Reason = reason
	return a
}
