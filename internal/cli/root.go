package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/interrupt"
	"github.com/qoslab/qoslab/internal/suggest"
	"github.com/qoslab/qoslab/internal/version"
)

// NewCmdRoot builds the qoslab command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "qoslab",
		Short: "Measure whether thread QoS survives virtualization",
		Long: `qoslab runs the same agent and workloads on the host and in VMs, at each QoS
class with 1..N threads, and contrasts the results.

Flags win over QOSLAB_* variables, which win over the config file (--config,
./qoslab.yaml, $XDG_CONFIG_HOME/qoslab/config.yaml). Keys are flag names under
their command (bench.loops, QOSLAB_BENCH_LOOPS); agent, results and image-store
are top level, shared by every command (QOSLAB_RESULTS).`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return wrapUsage(f.Settings.CheckKeys())
		},
	}
	root.SetFlagErrorFunc(flagError)
	root.PersistentFlags().StringVar(&f.Settings.Path, "config", "", "configuration file (YAML)")
	_ = root.MarkPersistentFlagFilename("config", "yaml", "yml")

	root.AddCommand(
		newCmdRun(f, nil),
		newCmdBench(f, nil),
		newCmdResults(f),
		newCmdSpecs(f),
		newCmdCompare(f, nil),
		newCmdPlot(f, nil),
		newCmdReport(f, nil),
		newCmdAgent(f),
		newCmdImage(f),
		newCmdVM(f),
		newCmdDoctor(f, nil),
		hidden(contention.SpinnerCommand+" N", func(cmd *cobra.Command, args []string) error {
			return contention.SpinnerMain(cmd.Context(), args, f.IO.In, f.IO.Out)
		}),
	)
	for _, h := range registry.Helpers() {
		root.AddCommand(hidden(h.Name+" "+h.Arg, func(cmd *cobra.Command, args []string) error {
			return h.Main(cmd.Context(), args[0])
		}))
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	// cobra adds its completion command only when it executes: added now,
	// its unknown shells can be refused like any unknown subcommand.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			refuseUnknown(c)
		}
	}
	usageArgs(root)
	fitHelp(root, f.IO)
	return root
}

// helpWidthKey is the root command's annotation holding the columns its
// tree's help fits (fitHelp): cobra's template functions are global, a
// tree's width is not, so each tree carries its own.
const helpWidthKey = "qoslab.help-width"

// fitHelp makes every command's help under root fit io's width (issue 40):
// cobra's own templates, with flag usages wrapped (pflag's
// FlagUsagesWrapped, as gh does), each command's summary wrapped beside
// its name, and a description's or example's line longer than the width
// wrapped at its spaces. Every text is kept, only wrapped.
func fitHelp(root *cobra.Command, io *IOStreams) {
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[helpWidthKey] = strconv.Itoa(io.width())
	width := func(c *cobra.Command) int {
		if w, err := strconv.Atoi(c.Root().Annotations[helpWidthKey]); err == nil {
			return w
		}
		return defaultWidth
	}
	cobra.AddTemplateFuncs(map[string]any{
		"flagUsages": func(c *cobra.Command, fs *pflag.FlagSet) string {
			return fs.FlagUsagesWrapped(width(c))
		},
		"fitText": func(c *cobra.Command, s string) string { return wrapText(s, width(c)) },
		"commandLine": func(c *cobra.Command, name string, pad int, short string) string {
			off := 2 + pad + 1
			lines := wrapWords(textWords(short), max(width(c)-off, minLast))
			return fmt.Sprintf("%-*s %s", pad, name, strings.Join(lines, "\n"+strings.Repeat(" ", off)))
		},
	})
	usage := strings.NewReplacer(
		"{{.LocalFlags.FlagUsages", "{{flagUsages $ .LocalFlags",
		"{{.InheritedFlags.FlagUsages", "{{flagUsages $ .InheritedFlags",
		"{{rpad .Name .NamePadding }} {{.Short}}", "{{commandLine $ .Name .NamePadding .Short}}",
		"{{.Example}}", "{{fitText $ .Example}}",
	).Replace(root.UsageTemplate())
	root.SetUsageTemplate(usage)
	root.SetHelpTemplate(strings.Replace(root.HelpTemplate(), "{{. | trimTrailingWhitespaces}}", "{{fitText $ . | trimTrailingWhitespaces}}", 1))
}

// usageArgs makes every argument check in the tree under cmd return a
// usage error: cobra's own (the hidden commands' ExactArgs, the completion
// scripts' NoArgs) as well as qoslab's, which already do.
func usageArgs(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error { return wrapUsage(check(c, args)) }
	}
	for _, c := range cmd.Commands() {
		usageArgs(c)
	}
}

// hidden is a command qoslab runs of itself (a helper process), not users.
func hidden(use string, run func(*cobra.Command, []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Hidden: true, Args: cobra.ExactArgs(1), RunE: run}
}

// group makes cmd a command of subcommands: alone it prints its help; a
// word that is not one of them is a usage error with a did-you-mean.
func group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.AddCommand(subs...)
	return refuseUnknown(cmd)
}

// refuseUnknown makes cmd, a command of subcommands, print its help when
// run alone and refuse any other word with a usage error that lists its
// subcommands and guesses the one meant.
func refuseUnknown(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		msg := fmt.Sprintf("unknown command %q for %q: allowed %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		if g := suggest.Closest(args[0], names); g != "" {
			msg += fmt.Sprintf("; did you mean %s?", g)
		}
		return usageErrorf("%s", msg)
	}
	return cmd
}

// Exit statuses beyond 0 (success), 1 (failure) and 2 (usage error), for
// scripts and CI: what `run --exit-status`, `results show --exit-status`
// and `compare --fail-on` found.
const (
	// exitNo: a verdict is "no" (QoS is not subsumed), or compare found a
	// significant change larger than --fail-on.
	exitNo = 3
	// exitInconclusive: no verdict is "no" but one is inconclusive, or the
	// run has no verdict to give.
	exitInconclusive = 4
)

// exitError ends qoslab with Code once everything the command had to
// write is written; Reason is the one line stderr gets.
type exitError struct {
	Code   int
	Reason string
}

func (e *exitError) Error() string { return e.Reason }

// Execute runs qoslab with args and returns the process exit status:
// 0 success, 1 failure, 2 usage error, 3 and 4 what --exit-status and
// --fail-on found (exitNo, exitInconclusive), 128 + the signal's number
// when a signal stopped it (130 for Ctrl-C's SIGINT, 143 for SIGTERM).
func Execute(ctx context.Context, f *Factory, args []string) int {
	f.colorStreams()
	return executeRoot(ctx, f, NewCmdRoot(f), args)
}

// executeRoot runs root, qoslab's command tree, with args and returns the
// exit status Execute gives.
func executeRoot(ctx context.Context, f *Factory, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if cmd == nil {
		cmd = root
	}
	if err != nil && cmd.CalledAs() == "" {
		// cobra refused the command line before calling any command: the
		// one refusal it makes there is a word that names no command of
		// the root (its legacy argument check, which runs while it finds
		// the command, since the root, running no code of its own, has no
		// Args). Groups under it refuse unknown words themselves.
		err = wrapUsage(err)
	}
	var exit *exitError
	switch {
	case err == nil:
		return 0
	case experiment.IsInterrupted(ctx, err):
		code, why := 130, "interrupted"
		if i := interrupt.Of(ctx); i != nil {
			code, why = i.ExitCode(), i.Error()
		}
		fmt.Fprintf(f.IO.ErrOut, "qoslab: %s\n", why)
		var u *experiment.UnfinishedError
		if errors.As(err, &u) {
			fmt.Fprintln(f.IO.ErrOut, u.Hint())
		}
		return code
	case errors.As(err, &exit):
		fmt.Fprintf(f.IO.ErrOut, "qoslab: exit status %d: %s\n", exit.Code, exit.Reason)
		return exit.Code
	case isUsageError(err):
		fmt.Fprintf(f.IO.ErrOut, "qoslab: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
		return 2
	default:
		fmt.Fprintf(f.IO.ErrOut, "qoslab: %v\n", err)
		return 1
	}
}

// flagError is every command's answer to a flag it cannot parse: a usage
// error, with the flag the user likely meant when the name is a typo of
// one of the command's (or a prefix of exactly one).
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	var typed string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		typed = strings.TrimPrefix(msg, "unknown flag: --")
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		// "unknown shorthand flag: 'q' in -quik": a long flag typed with one dash.
		if _, after, ok := strings.Cut(msg, " in -"); ok && len(after) > 1 {
			typed = after
		}
	}
	if typed == "" {
		return &usageError{Err: err}
	}
	typed, _, _ = strings.Cut(typed, "=")
	var names []string
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if !fl.Hidden {
			names = append(names, fl.Name)
		}
	})
	// A flag cut short ("--dur") means the one it starts, when only one
	// does; otherwise the nearest by edit distance.
	var guess string
	var prefixed []string
	for _, n := range names {
		if strings.HasPrefix(n, typed) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		guess = prefixed[0]
	} else {
		guess = suggest.Closest(typed, names)
	}
	if guess == "" {
		return &usageError{Err: err}
	}
	return &usageError{Err: fmt.Errorf("%w; did you mean --%s?", err, guess)}
}
