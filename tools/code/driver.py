# The jarvis code driver. jarvis starts it with `python3 -I -B -X utf8 -c
# <confine.py + this file> <settings JSON>`; it confines the interpreter it
# runs in and then runs the code jarvis sends it. It is the only code that
# runs between the interpreter starting and the user's code, so everything
# that must hold before that code runs (mount isolation, dropped
# capabilities, the seccomp filter: _jarvis_confine in confine.py; then
# the resource limits) is done here, in this order, before the first byte
# of it is read.
#
# Modes:
#   oneshot  read one {"type": "run"} frame from the control pipe, run it,
#            exit with its status (0, 1 on an exception, or SystemExit's code)
#   repl     run frames until the control pipe closes, keeping one namespace;
#            after each run, kill every other process of the sandbox, write
#            the call's marker to stdout and stderr and a {"type": "done"}
#            frame, so jarvis knows where the call's output ends even when
#            the code printed anything at all
#   stdin    read the code from standard input and run it once (containers),
#            in a child, killing it at the wall-clock limit if one is given
#
# Frames are single-line JSON objects; jarvis writes to fd 3 and reads fd 4.
# The user's output goes to fds 1 and 2 only, so nothing it prints can be
# mistaken for a frame.
#
# Exit statuses jarvis interprets (the code can produce them too, but then
# it only mislabels its own end):
#   124  stdin mode: the wall-clock limit passed; every process was killed
#   152  repl: threads the code left running used up the CPU time allowed
#        between calls, so the driver stopped the interpreter; stdin mode:
#        the code was killed at its CPU time limit (128 + SIGXCPU)
import sys


def _jarvis_driver():
    import ast
    import builtins
    import json
    import linecache
    import os
    import select
    import signal
    import time
    import traceback
    import types

    settings = json.loads(sys.argv[1])
    mode = settings["mode"]
    driver_file = sys._getframe().f_code.co_filename
    driver_pid = os.getpid()
    status = {
        "type": "ready", "python": sys.version.split()[0], "notes": [],
        "filesystem_readonly": False, "readonly_method": "", "private_proc": False,
        "private_dev": False, "terminals_hidden": False, "capabilities_dropped": False,
        "keyring_private": False, "seccomp": False, "hidden": [], "not_hidden": [],
    }
    note = status["notes"].append
    EXIT_TIMEOUT, EXIT_IDLE_CPU = 124, 152

    # Control pipes: moved off fds 3 and 4 (os.dup makes them
    # non-inheritable), so programs the code starts do not get them.
    ctl_in = ctl_out = None
    if mode != "stdin":
        ctl_in = os.dup(3)
        ctl_out = os.dup(4)
        os.close(3)
        os.close(4)
    pending = bytearray()

    def send(obj):
        data = (json.dumps(obj) + "\n").encode()
        while data:
            data = data[os.write(ctl_out, data):]

    def receive(idle=None):
        # One frame, or None when jarvis closed the pipe. While waiting,
        # idle() runs every second if given: the code's threads may be
        # running, and they are watched.
        while b"\n" not in pending:
            if idle is not None and not select.select([ctl_in], [], [], 1.0)[0]:
                idle()
                continue
            chunk = os.read(ctl_in, 1 << 16)
            if not chunk:
                return None
            pending.extend(chunk)
        i = pending.index(b"\n")
        line = bytes(pending[:i])
        del pending[:i + 1]
        return json.loads(line)

    def count_user_tasks():
        # RLIMIT_NPROC counts threads, so count every task of this uid.
        uid, n = os.getuid(), 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                if os.stat("/proc/" + pid).st_uid == uid:
                    n += len(os.listdir("/proc/%s/task" % pid))
            except OSError:
                pass
        return n

    import resource

    cpu = settings["cpu_seconds"]
    # repl: the CPU budget of the interpreter's whole life, which the code
    # cannot raise; the soft limit moves before and after each call.
    cpu_hard = cpu + 2
    if mode == "repl":
        cpu_hard = max(settings.get("session_cpu_seconds") or 0, cpu + 2)
    in_call = [False]

    class CPUTimeLimitExceeded(BaseException):
        # Not an Exception, so `except Exception` in the code does not
        # swallow it.
        pass

    def cpu_used():
        u = resource.getrusage(resource.RUSAGE_SELF)  # every thread
        return u.ru_utime + u.ru_stime

    def apply_limits():
        applied = {}

        def limit(name, res, soft, hard=None):
            if res is None or not soft:
                return  # not asked for (a container sets its own) or unknown here
            if hard is None:
                hard = soft
            cur_soft, cur_hard = resource.getrlimit(res)
            if cur_hard != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or hard > cur_hard):
                hard = cur_hard
            soft = min(soft, hard) if hard != resource.RLIM_INFINITY else soft
            try:
                resource.setrlimit(res, (soft, hard))
                applied[name] = True
            except (ValueError, OSError) as e:
                applied[name] = False
                note("limit %s not applied: %s" % (name, e))

        # SIGXCPU at the soft limit; the kernel kills outright at the hard
        # one if the code ignores it.
        limit("cpu_seconds", resource.RLIMIT_CPU, min(cpu, cpu_hard - 1) if mode == "repl" else cpu, cpu_hard)
        limit("memory_bytes", resource.RLIMIT_AS, settings["memory_bytes"])
        limit("file_size_bytes", resource.RLIMIT_FSIZE, settings["file_size_bytes"])
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ValueError, OSError):
            pass
        limit("open_files", resource.RLIMIT_NOFILE, 1024)
        nproc = settings["max_processes"]
        if nproc > 0 and settings.get("nproc_counts_user"):
            # Without a user namespace the kernel counts every process of
            # this uid, not just ours: leave room for the ones that exist.
            nproc += count_user_tasks()
        if nproc > 0:
            limit("max_processes", getattr(resource, "RLIMIT_NPROC", None), nproc)
        status["limits"] = applied
        # Past the file size limit a write fails with EFBIG (an OSError the
        # code sees) instead of killing the process.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

        # The driver is the init of its pid namespace, and an init ignores
        # signals it has no handler for: without this one, the soft CPU limit
        # would do nothing. Between repl calls it must not raise: the driver
        # is waiting for jarvis then, and its idle watch deals with the
        # threads that use the time.
        def on_xcpu(signum, frame):
            if in_call[0]:
                raise CPUTimeLimitExceeded(cpu_message[0])

        signal.signal(signal.SIGXCPU, on_xcpu)

    cpu_message = ["the CPU time limit of %d s was reached" % cpu]
    idle_limit = [float(cpu)]

    def move_cpu_limit(for_call):
        # Give the next stretch (a call, or the wait for the next one) cpu
        # seconds of its own, within what is left of the budget.
        used = cpu_used()
        soft = min(int(used) + 1 + cpu, cpu_hard - 1)
        if for_call:
            cpu_message[0] = "the CPU time limit of %d s per call was reached" % cpu
            if soft < int(used) + 1 + cpu:
                cpu_message[0] = ("the interpreter's CPU time for the whole session (%d s) ran out during this call"
                                  % cpu_hard)
        else:
            idle_limit[0] = min(used + cpu, cpu_hard - 1)
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (max(soft, 1), cpu_hard))
        except (ValueError, OSError):
            pass

    def watch_idle():
        # Called every second while the driver waits for the next call and
        # the code left threads behind: they get the same CPU time as a call
        # would, then the interpreter is stopped (jarvis tells the next call).
        if cpu_used() >= idle_limit[0]:
            os._exit(EXIT_IDLE_CPU)

    def threads_left():
        try:
            return len(os.listdir("/proc/self/task")) > 1
        except OSError:
            return True

    def kill_others():
        # Processes the code started do not outlive its call. As the init of
        # the pid namespace, kill(-1) reaches every other process in it;
        # without one, the processes of this session are found in /proc.
        def kill_once():
            if os.getpid() == 1:
                try:
                    os.kill(-1, signal.SIGKILL)
                except OSError:
                    pass
                return
            me, sid = os.getpid(), os.getsid(0)
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) == me:
                    continue
                try:
                    with open("/proc/%s/stat" % entry) as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    if int(fields[3]) == sid:
                        os.kill(int(entry), signal.SIGKILL)
                except (OSError, IndexError, ValueError):
                    pass

        deadline = time.monotonic() + 2
        while True:
            kill_once()
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.005)

    libc = _jarvis_confine(settings, status)
    apply_limits()
    if status["seccomp"] and sys.version_info >= (3, 14):
        # multiprocessing's default start method became forkserver, which
        # talks over a Unix socket that the filter refuses; fork works.
        try:
            import multiprocessing

            multiprocessing.set_start_method("fork")
        except (ImportError, RuntimeError, ValueError):
            pass

    # The code runs as __main__ in a module of its own: the driver's names are
    # not in its namespace, and pickle and `import __main__` find its objects.
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    namespace = main.__dict__
    sys.argv = [""]
    stdout, stderr = sys.stdout, sys.stderr
    for stream in (stdout, stderr):
        try:
            stream.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):
            pass
    saved_fds = (os.dup(1), os.dup(2))

    def restore_streams():
        # Undo what the last call did to its output: fds 1 and 2 closed or
        # redirected, sys.stdout replaced or closed.
        nonlocal stdout, stderr
        for fd, saved in zip((1, 2), saved_fds):
            try:
                os.dup2(saved, fd)
            except OSError:
                pass
        if stdout.closed:
            stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)
        if stderr.closed:
            stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)
        sys.stdout, sys.stderr = stdout, stderr

    def print_exception(e):
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == driver_file:
            tb = tb.tb_next
        try:
            traceback.print_exception(type(e), e, tb, file=sys.stderr)
        except Exception:
            sys.stderr.write("%s: %s\n" % (type(e).__name__, e))

    def exit_code(e):
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        sys.stderr.write("%s\n" % code)
        return 1

    def run_cell(source, filename):
        # Returns ("ok" | "error" | "exit", exit code). The value of a final
        # expression statement is echoed, as a Python prompt or a notebook
        # cell would.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            tree = ast.parse(source, filename, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            body = compile(ast.Module(body=tree.body, type_ignores=[]), filename, "exec", dont_inherit=True)
            tail = compile(last, filename, "eval", dont_inherit=True) if last is not None else None
        except (SyntaxError, ValueError) as e:
            # Only the error and where it is: the frames are the driver's.
            sys.stderr.write("".join(traceback.format_exception_only(type(e), e)))
            return "error", 1
        try:
            in_call[0] = True
            try:
                exec(body, namespace)
                if tail is not None:
                    sys.displayhook(eval(tail, namespace))
            finally:
                in_call[0] = False
            return "ok", 0
        except SystemExit as e:
            return "exit", exit_code(e)
        except BaseException as e:
            print_exception(e)
            return "error", 1

    def flush():
        for stream in (sys.stdout, sys.stderr, stdout, stderr):
            try:
                stream.flush()
            except Exception:
                pass

    def leave_if_forked():
        # A process the code forked returns here too: it must never speak on
        # the control pipe or run the next call.
        if os.getpid() != driver_pid:
            flush()
            os._exit(0)

    def supervise(source, wall):
        # stdin mode with a wall clock: the code runs in a child; this
        # process, which the code cannot signal (it is the container's init,
        # and no longer dumpable), kills it when the time is up. When it
        # exits the container ends, and every process in it with it.
        nonlocal driver_pid
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        child = os.fork()
        if child == 0:
            driver_pid = os.getpid()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            os.setpgid(0, 0)
            kind, code = run_cell(source, "<code>")
            leave_if_forked()
            flush()
            os._exit(code)
        if libc is not None:
            libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
        deadline = time.monotonic() + wall
        result = None
        while result is None:
            left = deadline - time.monotonic()
            if left <= 0:
                for target in (-child, child):
                    try:
                        os.kill(target, signal.SIGKILL)
                    except OSError:
                        pass
                sys.stderr.write("\njarvis: the wall-clock limit of %g s was reached; the code was killed\n" % wall)
                flush()
                os._exit(EXIT_TIMEOUT)
            signal.sigtimedwait({signal.SIGCHLD}, min(left, 1.0))
            while True:
                try:
                    pid, st, usage = os.wait4(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                if pid == child:
                    result, used = st, usage.ru_utime + usage.ru_stime
        try:
            os.kill(-child, signal.SIGKILL)  # what it left behind
        except OSError:
            pass
        if os.WIFEXITED(result):
            os._exit(os.WEXITSTATUS(result))
        sig = os.WTERMSIG(result)
        if sig == signal.SIGKILL and used >= cpu:
            sig = signal.SIGXCPU  # the hard CPU limit, not the memory limit
        os._exit(128 + sig)

    if mode == "stdin":
        source = sys.stdin.read()
        sys.stdin.close()
        sys.stdin = open(os.devnull)
        if settings.get("wall_seconds"):
            supervise(source, settings["wall_seconds"])
        kind, code = run_cell(source, "<code>")
        leave_if_forked()
        flush()
        sys.exit(code)

    send(status)
    if mode == "oneshot":
        frame = receive()
        if frame is None:
            os._exit(0)
        os.close(ctl_in)
        os.close(ctl_out)
        kind, code = run_cell(frame["code"], "<code>")
        leave_if_forked()
        flush()
        sys.exit(code)

    move_cpu_limit(False)
    while True:
        frame = receive(watch_idle if threads_left() else None)
        if frame is None:
            flush()
            os._exit(0)
        restore_streams()
        move_cpu_limit(True)
        kind, code = run_cell(frame["code"], "<cell %d>" % frame["id"])
        leave_if_forked()
        kill_others()
        move_cpu_limit(False)
        flush()
        restore_streams()
        marker = frame["marker"].encode()
        for fd in (1, 2):
            try:
                os.write(fd, marker)
            except OSError:
                pass
        send({"type": "done", "id": frame["id"], "status": kind, "exit_code": code, "cpu_used": cpu_used()})


_jarvis_driver()
