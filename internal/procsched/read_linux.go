package procsched

// Read reads this process's scheduling (see ReadLinux).
func Read() Scheduling { return readLinux("/") }
