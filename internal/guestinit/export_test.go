package guestinit

// LogPrefix is what starts the guest init's console lines, for the boot
// test, which is in package guestinit_test to use internal/image (which
// imports this package).
const LogPrefix = logPrefix

// VirtioPortPrefix starts a listen address naming a virtio-serial port.
const VirtioPortPrefix = virtioPortPrefix
