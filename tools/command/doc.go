// Package command turns the [[commands]] entries of the config file into
// tools: each runs one program with an argument vector written in the
// config, the model's arguments substituted into it.
//
// # Substitution
//
// An argv element is text with placeholders, {NAME} for the parameter
// NAME; {{ and }} stand for literal braces. A placeholder lies inside one
// element, and its value always becomes part of that one element, never
// several: there is no shell, no word splitting, no globbing, so a value
// such as `; rm -rf ~` or `$(reboot)` reaches the program as those
// characters. The program (argv[0]) is always the config's; a placeholder
// there is refused. `~` and `~/...` at the start of an element written in
// the config are the home directory; a `~` in a substituted value stays a
// `~`.
//
// Values are written as the model sent them: a string as is, an integer in
// decimal, a number in the shortest decimal form, a boolean as true or
// false. A value with a NUL byte cannot be an argument and is refused.
//
// A value that begins an element and starts with '-' would be read as an
// option by most programs (`grep {word}` with word "--include=..."): it is
// refused, unless the parameter says allow_option = true, or an element
// "--" comes before it in argv (after "--" a program reads no options).
// Inside an element ("--max-count={n}", "-e{word}") it is harmless and
// allowed.
//
// An optional parameter the model leaves out drops every element that
// uses it (so "--max-count={n}" disappears with n), and stdin is empty when
// its template uses it.
//
// # Running
//
// The program runs directly (exec, no shell) with a clean environment
// (PATH, HOME, the locale and the few others every program needs, plus the
// variables pass_env names; never jarvis's API keys and tokens), in
// the entry's cwd, else the tools' working directory (tools.Deps.WorkDir: an
// evaluation case's scratch directory; jarvis's own otherwise), in a session of its own:
// it has no controlling terminal, so it cannot read what the person types
// into jarvis, and its stdin is the stdin template or nothing. When the
// call's time is up or the run is cancelled, its whole process group is
// killed; so is whatever it leaves running when it exits. A program that
// leaves its process group on purpose (a daemon) is not followed. On Linux
// the program dies with jarvis, gets no core files, and the entry's
// cpu_seconds, memory_mb and max_file_size_mb set RLIMIT_CPU, RLIMIT_AS
// and RLIMIT_FSIZE (none by default: address-space limits break Go and
// Node programs, and a command is a program the person chose). The limits
// are set just after the program starts: a process it forks in its first
// instants keeps the old ones.
//
// The result is stdout, capped like the code tools' output (the first
// three quarters and the last quarter of max_output_bytes). When the exit
// status is not one of success_codes ([0] by default; grep's "no match" is
// 1), the result fails and says the status, with stdout and stderr.
//
// A command asks for confirmation unless its entry says confirm = false:
// a command can do whatever its program can, and the rules that keep
// file_read inside the working area do not apply to it.
package command
