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
// The driver (confine.py and driver.py, embedded) runs before any of the
// code and, in this order: sets up the file system view, drops privileges,
// replaces the session keyring, installs a seccomp filter, applies the
// resource limits, reports what it achieved, and only then reads the code
// from a pipe. Doing this inside the new process, before the code exists
// there, is what makes it free of races: there is no moment when the code
// runs without its limits, which setting limits from outside on a started
// process (prlimit) cannot promise, and it needs no helper binary.
//
// The process starts in new user, network, pid, mount, IPC and UTS
// namespaces:
//
//   - network: only a loopback interface that is down; no connection leaves
//     the machine or reaches a local service, abstract Unix sockets
//     included. A network namespace does not cover Unix sockets in the file
//     system (a Docker or agent socket under the home directory): the
//     seccomp filter refuses to create Unix sockets at all (socketpair, for
//     pipes between the code's own processes, stays allowed, stream kind
//     only), and io_uring, which could create one without the syscall.
//   - file system: everything is read-only except the working directory and
//     private, size-limited /tmp and /dev/shm: mount_setattr(2) on Linux
//     5.12 and later, else every mount remounted read-only in turn; the
//     result is verified mount by mount. /dev is private (null, zero, full,
//     random, urandom, tty, and a devpts of its own: the user's terminals
//     under /dev/pts and devices such as cameras are out of reach). /run
//     (D-Bus, Docker and other daemons' sockets), $XDG_RUNTIME_DIR,
//     credentials under the home directory (~/.ssh, ~/.aws, ~/.gnupg, ...),
//     jarvis's own config and data, and Config.HidePaths (the CLI adds the
//     config file and database actually in use) are covered by empty file
//     systems. /proc shows only the sandbox's processes, and not the
//     user's keys.
//   - privileges: every capability is dropped (bounding set included),
//     securebits are locked so exec cannot regain any, no_new_privs is set.
//     The code cannot undo the read-only mounts or raise its limits. The
//     session keyring is a new, empty one, and the key syscalls are
//     refused.
//   - identity: as root, jarvis runs the code as nobody (uid and gid 65534,
//     no supplementary groups), so it cannot read root's files and the
//     kernel applies RLIMIT_NPROC to it. An interpreter nobody cannot run
//     (pyenv under /root) is replaced by a system one, and the result says
//     so; with none, nothing runs and the error says how to configure one.
//   - processes: the driver is the init of its pid namespace, so when it is
//     killed the kernel kills every process the code started, including one
//     that called setsid to leave the process group.
//
// Reading is not otherwise restricted: the code can read whatever the user
// it runs as can read, except the hidden paths. Use code_interpreter_docker,
// whose container sees none of the host's files, when that matters.
//
// # When the sandbox cannot be set up
//
// By default, code runs only when the namespaces, the read-only file
// system, the hidden paths, the terminals and the capability drop are all
// in force (isolation.missing): otherwise the call fails with what is
// missing, why, and how to proceed. Config.AllowUnconfined runs it anyway
// with what is available (without namespaces: the limits only, with the
// file and network access of the user the code runs as), and every result
// says what was in force. Config.RequireIsolation adds the other defences
// (seccomp, private /proc and /dev, keyring, process limit) to what is
// required, and overrides AllowUnconfined. The tools' descriptions say what
// the model can expect on this machine.
//
// # Limits
//
// Every process gets RLIMIT_CPU (SIGXCPU, then SIGKILL two seconds later),
// RLIMIT_AS (MemoryError), RLIMIT_FSIZE (a write fails with EFBIG), no core
// files and 1024 open files. The number of processes and threads is capped
// with RLIMIT_NPROC, counted per user namespace so only the sandbox's own
// processes count; as root a pids cgroup does it too (and lets jarvis find
// and kill every process of the run). The wall-clock timeout kills the
// process group, the pid namespace and the cgroup with SIGKILL; so does a
// cancelled context. Memory is limited per process: with N processes the
// code can use up to N times the limit.
//
// In the repl the CPU limit is per call (the driver moves the soft limit)
// within a hard limit for the interpreter's life, Config.SessionCPUSeconds,
// which the code cannot raise. Processes a call starts are killed when it
// ends; threads keep running between calls, and if they use a call's CPU
// time the driver stops the interpreter and the next call says so.
package code
