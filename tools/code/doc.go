// Package code holds the built-in tools that run the model's Python code:
// code_interpreter (a fresh interpreter per call), repl (one persistent
// interpreter per session) and code_interpreter_docker (a throwaway
// container per call). All three require confirmation.
//
// # How code_interpreter and repl confine the code
//
// Python is started directly (a version manager's shim is resolved once to
// the interpreter it would run) as `python3 -I -B -X utf8 -c <driver>`, in
// a new private directory under the temporary directory, removed
// afterwards, with an environment of its own: PATH, HOME and TMPDIR (the
// private directory), LANG. Nothing of jarvis's environment reaches it.
// It runs in a session of its own, so it has no controlling terminal: it
// cannot open /dev/tty to read what the user types into jarvis. Its stdin
// is /dev/null.
//
// The driver (driver.py, embedded) runs before any of the code and, in
// this order: sets up the file system view, drops privileges, applies the
// resource limits, reports what it achieved, and only then reads the code
// from a pipe. Doing this inside the new process, before the code exists
// there, is what makes it free of races: there is no moment when the code
// runs without its limits, which setting limits from outside on a started
// process (prlimit) cannot promise, and it needs no helper binary.
//
// When the kernel allows unprivileged user namespaces (decided at the first
// run and remembered), the process starts in new user, network, pid, mount,
// IPC and UTS namespaces:
//
//   - network: only a loopback interface that is down; no connection leaves
//     the machine or reaches a local service, abstract Unix sockets
//     included. Results say network_isolated: true.
//   - file system: everything is read-only except the working directory and
//     private, size-limited /tmp and /dev/shm. /run (D-Bus, Docker and
//     other daemons' sockets), $XDG_RUNTIME_DIR, credentials under the home
//     directory (~/.ssh, ~/.aws, ~/.gnupg, ...), jarvis's own config and
//     data, and Config.HidePaths are covered by empty file systems. /proc
//     shows only the sandbox's processes.
//   - privileges: every capability is dropped (bounding set included),
//     securebits are locked so exec cannot regain any, no_new_privs is set.
//     The code cannot undo the read-only mounts or raise its limits.
//   - processes: the driver is the init of its pid namespace, so when it is
//     killed the kernel kills every process the code started, including one
//     that called setsid to leave the process group.
//
// Reading is not otherwise restricted: the code can read whatever the user
// running jarvis can read, except the hidden paths. Use
// code_interpreter_docker, whose container sees none of the host's files,
// when that matters.
//
// Without user namespaces (disabled by the administrator, or not Linux) the
// code runs with the limits only, as the user running jarvis, with that
// user's file system access and network, and results say
// network_isolated: false. Config.RequireIsolation refuses to run instead.
// Running jarvis as root without namespaces gives the code root's access
// to the file system (capabilities dropped, but root owns most files).
//
// # Limits
//
// Every process gets RLIMIT_CPU (SIGXCPU, then SIGKILL two seconds later),
// RLIMIT_AS (MemoryError), RLIMIT_FSIZE (a write fails with EFBIG), no core
// files and 1024 open files. The number of processes and threads is capped
// with RLIMIT_NPROC, counted per user namespace so only the sandbox's own
// processes count; the kernel ignores RLIMIT_NPROC for root, so as root a
// pids cgroup does it instead (and lets jarvis find and kill every process
// of the run). The wall-clock timeout kills the process group, the pid
// namespace and the cgroup with SIGKILL; so does a cancelled context.
// Memory is limited per process: with N processes the code can use up to N
// times the limit.
package code
