//go:build darwin

package qos

import (
	"fmt"
	"sync"
	"syscall"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

const libSystemPath = "/usr/lib/libSystem.B.dylib"

// pthreadQoS holds the <pthread/qos.h> functions, bound through purego
// because the agent is built without cgo.
type pthreadQoS struct {
	setSelf func(class uint32, relpri int32) int32                   // pthread_set_qos_class_self_np
	get     func(thread uintptr, class *uint32, relpri *int32) int32 // pthread_get_qos_class_np
	self    func() uintptr                                           // pthread_self
}

// loadPthreadQoS binds the functions once; the handle is never closed
// because the functions are used for the life of the process.
var loadPthreadQoS = sync.OnceValues(func() (*pthreadQoS, error) {
	lib, err := purego.Dlopen(libSystemPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("dlopen %s: %w", libSystemPath, err)
	}
	var p pthreadQoS
	for _, f := range []struct {
		name string
		fptr any
	}{
		{"pthread_set_qos_class_self_np", &p.setSelf},
		{"pthread_get_qos_class_np", &p.get},
		{"pthread_self", &p.self},
	} {
		sym, err := purego.Dlsym(lib, f.name)
		if err != nil {
			return nil, fmt.Errorf("dlsym %s in %s: %w", f.name, libSystemPath, err)
		}
		purego.RegisterFunc(f.fptr, sym)
	}
	return &p, nil
})

// errnoOf turns a pthread return value (0 or an errno) into an error.
func errnoOf(rc int32) error {
	if rc == 0 {
		return nil
	}
	return syscall.Errno(rc)
}

// readSelf reads the calling thread's qos_class_t and relative priority.
func (p *pthreadQoS) readSelf() (uint32, int, error) {
	var class uint32
	var relpri int32
	err := errnoOf(p.get(p.self(), &class, &relpri))
	return class, int(relpri), err
}

// ApplySelf applies class c to the calling OS thread (which the caller keeps
// locked for good) with pthread_set_qos_class_self_np and reads it back with
// pthread_get_qos_class_np.
func ApplySelf(c Class) Applied {
	p, err := loadPthreadQoS()
	if err != nil {
		return Applied{Asked: c, Reason: "QoS classes unavailable: " + err.Error()}
	}
	var setErr error
	if c.Valid() {
		setErr = errnoOf(p.setSelf(uint32(c), 0))
	}
	got, relpri, getErr := p.readSelf()
	return pthreadApplied(c, setErr, got, relpri, getErr)
}

// ReadSelf reads the calling thread's class and the OS-level detail it is read from.
func ReadSelf() (Class, string, error) {
	p, err := loadPthreadQoS()
	if err != nil {
		return Unspecified, "", fmt.Errorf("QoS classes unavailable: %w", err)
	}
	got, relpri, err := p.readSelf()
	if err != nil {
		return Unspecified, "", fmt.Errorf("pthread_get_qos_class_np: %w", err)
	}
	return pthreadQoSClass(got), pthreadQoSDetail(got, relpri), nil
}

// Support describes what this OS can apply, e.g.
// "darwin 24.6.0: pthread_set_qos_class_self_np from /usr/lib/libSystem.B.dylib".
func Support() string {
	release := ""
	if r, err := unix.Sysctl("kern.osrelease"); err == nil {
		release = " " + r
	}
	if _, err := loadPthreadQoS(); err != nil {
		return "darwin" + release + ": QoS classes unavailable: " + err.Error()
	}
	return "darwin" + release + ": pthread_set_qos_class_self_np and pthread_get_qos_class_np from " + libSystemPath
}
