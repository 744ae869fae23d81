// Package render words and draws qoslab's values for people: the one place
// English is made from analysis' values, and colour chosen from them.
package render
