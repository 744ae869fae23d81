package broken

import "example.com/vzfork"

// Dial calls the replaced module wrongly.
func Dial(d *vzfork.VirtioSocketDevice) error {
	c, err := d.Connect() // want `not enough arguments in call to d.Connect`
	if err != nil {
		return err
	}
	return c.Close()
}
