package render

import "slices"

// The output formats of the commands that show a document (--format):
// text, the terminal's view, fitted to its width and coloured from the
// tones; md, Markdown; json, the command's typed document; csv, its table.
const (
	FormatText     = "text"
	FormatMarkdown = "md"
	FormatJSON     = "json"
	FormatCSV      = "csv"
)

// Formats are the formats, in the order help lists them.
var Formats = []string{FormatText, FormatMarkdown, FormatJSON, FormatCSV}

// FormatAliases are the formats' older names (compare's and bench's), and
// the format each names, so that scripts that name them keep working.
var FormatAliases = map[string]string{"table": FormatText, "markdown": FormatMarkdown}

// FormatOf is the format name names, its alias resolved; "" when it names
// none.
func FormatOf(name string) string {
	if a, ok := FormatAliases[name]; ok {
		return a
	}
	if slices.Contains(Formats, name) {
		return name
	}
	return ""
}
