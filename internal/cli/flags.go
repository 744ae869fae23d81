package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/suggest"
)

// dirArgs checks a command's results directory arguments: at least one
// and at most maxDirs (0: no limit), saying what the command wants when
// the count is wrong.
func dirArgs(maxDirs int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		want := "one results directory (DIR, or latest for the newest under --results)"
		if maxDirs != 1 {
			want = "one or more results directories (DIR, or latest for the newest under --results)"
		}
		switch {
		case len(args) == 0:
			return usageErrorf("%s needs %s; none given (qoslab results list names them)", cmd.CommandPath(), want)
		case maxDirs > 0 && len(args) > maxDirs:
			return usageErrorf("%s takes %s; got %d: %s", cmd.CommandPath(), want, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

// oneOf checks that the setting name has one of the allowed values.
func oneOf(name, v string, allowed []string) error {
	return wrapUsage(suggest.OneOf(name, v, allowed))
}

// complete offers fixed values for a flag (comma-separated lists complete
// item by item) and no file names.
func complete(cmd *cobra.Command, flag string, values func() []string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
		prefix := ""
		if i := strings.LastIndex(typed, ","); i >= 0 {
			prefix = typed[:i+1]
		}
		var out []string
		for _, v := range values() {
			out = append(out, prefix+v)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// fixed returns values as a completion source.
func fixed(values ...string) func() []string { return func() []string { return values } }

// completeArgs offers names for a command's arguments.
func completeArgs(cmd *cobra.Command, names func() []string) {
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(), cobra.ShellCompDirectiveNoFileComp
	}
}

// command finishes cmd in the pattern every command follows: its flags fill
// opts; before it runs, the environment and config file fill the flags the
// user left alone (under section, "" for none); prepare checks the values
// and fills in what depends on this machine; then runF (in tests) or run
// does the work from opts alone. Call it after the flags are defined.
func command[O any](f *Factory, cmd *cobra.Command, section string, opts *O, src *sources, prepare func(args []string) error, run, runF func(context.Context, *O) error) *cobra.Command {
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	// The root gives every command this already; set here too, a command
	// built alone (as tests do) refuses flags as it does under the root.
	cmd.SetFlagErrorFunc(flagError)
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if prepare != nil {
			if err := prepare(args); err != nil {
				return err
			}
		}
		if runF != nil {
			return runF(c.Context(), opts)
		}
		return run(c.Context(), opts)
	}
	if src == nil {
		src = new(sources)
	}
	f.configure(cmd, section, src)
	return cmd
}
