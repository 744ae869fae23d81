// Package shquote quotes words for a POSIX shell, and for zsh, macOS's
// login shell, through which ssh runs a command on a Mac (a leaf).
package shquote

import "strings"

// safe are the characters no POSIX shell or zsh treats specially inside a
// word.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@,"

// Quote returns s as one shell word: as it is when that is already one
// word that expands to itself (only letters, digits and /._-+=:@, and not
// starting with '=', which zsh expands to a program's path), else in single
// quotes, each single quote in s written as '\”. So a command that qoslab
// prints to be pasted reads as typed where it can, and one it runs gets s
// whatever s holds.
func Quote(s string) string {
	if s != "" && s[0] != '=' && strings.Trim(s, safe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
