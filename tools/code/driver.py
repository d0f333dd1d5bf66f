# The jarvis code driver. jarvis starts it with `python3 -I -B -X utf8 -c
# <this file> <settings JSON>`; it confines the interpreter it runs in and
# then runs the code jarvis sends it. It is the only code that runs between
# the interpreter starting and the user's code, so everything that must hold
# before that code runs (mount isolation, dropped capabilities, resource
# limits) is done here, in this order, before the first byte of it is read.
#
# Modes:
#   oneshot  read one {"type": "run"} frame from the control pipe, run it,
#            exit with its status (0, 1 on an exception, or SystemExit's code)
#   repl     run frames until the control pipe closes, keeping one namespace;
#            after each run, write the call's marker to stdout and stderr and
#            a {"type": "done"} frame, so jarvis knows where the call's output
#            ends even when the code printed anything at all
#   stdin    read the code from standard input and run it once (containers)
#
# Frames are single-line JSON objects; jarvis writes to fd 3 and reads fd 4.
# The user's output goes to fds 1 and 2 only, so nothing it prints can be
# mistaken for a frame.
import sys


def _jarvis_driver():
    import ast
    import builtins
    import json
    import linecache
    import os
    import signal
    import traceback
    import types

    settings = json.loads(sys.argv[1])
    mode = settings["mode"]
    driver_file = sys._getframe().f_code.co_filename
    driver_pid = os.getpid()
    status = {"type": "ready", "python": sys.version.split()[0], "notes": []}
    note = status["notes"].append

    # Control pipes: moved off fds 3 and 4 (os.dup makes them
    # non-inheritable), so programs the code starts do not get them.
    ctl_in = ctl_out = None
    if mode != "stdin":
        ctl_in = os.fdopen(os.dup(3), "rb")
        ctl_out = os.dup(4)
        os.close(3)
        os.close(4)

    def send(obj):
        data = (json.dumps(obj) + "\n").encode()
        while data:
            data = data[os.write(ctl_out, data):]

    def receive():
        line = ctl_in.readline()
        if not line:
            return None
        return json.loads(line)

    libc = None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except (ImportError, OSError) as e:
        note("ctypes is unavailable (%s): no mount isolation or capability drop" % e)

    def check(rc, what):
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, "%s: %s" % (what, os.strerror(err)))

    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
    MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18

    def mount(source, target, fstype, flags, data):
        enc = lambda s: None if s is None else s.encode()
        check(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
              "mount %s" % target)

    def set_readonly(path, readonly, recursive):
        # mount_setattr(2) (Linux 5.12): the one call that makes a whole
        # tree read-only, including mounts inherited from the parent
        # namespace. Its number is 442 on every architecture jarvis runs on.
        class MountAttr(ctypes.Structure):
            _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                        ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]

        attr = MountAttr(1, 0, 0, 0) if readonly else MountAttr(0, 1, 0, 0)
        flags = 0x8000 if recursive else 0  # AT_RECURSIVE
        libc.syscall.restype = ctypes.c_long
        check(libc.syscall(ctypes.c_long(442), ctypes.c_int(-100), path.encode(), ctypes.c_uint(flags),
                           ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr))),
              "make %s %s" % (path, "read-only" if readonly else "writable"))

    def isolate_filesystem(workdir):
        # Runs as root of a private user namespace with its own mount and pid
        # namespaces: nothing done here is visible outside.
        mount(None, "/", None, MS_REC | MS_PRIVATE, None)
        try:
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
            status["private_proc"] = True
        except OSError as e:
            note("the host's /proc stays visible (%s)" % e.strerror)
        keep = [os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix,
                                               os.path.dirname(sys.executable)}]
        wd_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY)
        size = "size=%d" % settings["tmpfs_bytes"]
        scratch = []
        for path in ("/tmp", "/dev/shm"):
            if os.path.isdir(path) and not os.path.islink(path):
                try:
                    mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, size + ",mode=1777")
                    scratch.append(path)
                except OSError as e:
                    note("%s is not private (%s)" % (path, e.strerror))
        hidden, covered = [], set()
        for path in settings["hide"]:
            if not os.path.lexists(path):
                continue
            real = os.path.realpath(path)
            if real in covered:
                continue
            covered.add(real)
            if any(k == real or k.startswith(real + os.sep) for k in keep):
                note("%s is not hidden: the Python installation lives under it" % path)
                continue
            try:
                if os.path.isdir(real):
                    mount("tmpfs", real, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=755")
                else:
                    mount("/dev/null", real, None, MS_BIND, None)
                hidden.append(path)
            except OSError as e:
                note("%s is not hidden (%s)" % (path, e.strerror))
        status["hidden"] = hidden
        # The working directory may sit under a path just covered (/tmp):
        # mount it back, by descriptor, at the same path.
        if not os.path.isdir(workdir):
            os.makedirs(workdir, 0o700)
        mount("/proc/self/fd/%d" % wd_fd, workdir, None, MS_BIND, None)
        os.close(wd_fd)
        os.chdir(workdir)
        set_readonly("/", True, True)
        for path in [workdir] + scratch:
            set_readonly(path, False, False)
        status["filesystem_readonly"] = True

    def drop_privileges():
        PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 38, 24, 28
        PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
        prctl = libc.prctl
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        # NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off and NO_CAP_AMBIENT_RAISE, each
        # locked: uid 0 gains nothing from exec or setuid from now on. Fails
        # harmlessly without CAP_SETPCAP, when there was nothing to drop.
        prctl(PR_SET_SECUREBITS, 0xEF, 0, 0, 0)
        try:
            with open("/proc/sys/kernel/cap_last_cap") as f:
                last = int(f.read())
        except (OSError, ValueError):
            last = 63
        for cap in range(last + 1):
            prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)

        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                        ("inheritable", ctypes.c_uint32)]

        data = (Data * 2)()
        libc.capset(ctypes.byref(Header(0x20080522, 0)), data)
        check(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    status["capabilities_dropped"] = int(line.split()[1], 16) == 0

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

    def apply_limits():
        import resource

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

        cpu = settings["cpu_seconds"]
        if mode == "repl":
            # The soft limit is moved before every call (move_cpu_limit); the
            # hard limit stays open so that can be done.
            limit("cpu_seconds", resource.RLIMIT_CPU, cpu, resource.RLIM_INFINITY)
        else:
            # SIGXCPU at the soft limit; the kernel kills outright at the hard
            # one if the code ignores it.
            limit("cpu_seconds", resource.RLIMIT_CPU, cpu, cpu + 2)
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
        # would do nothing. The exception is not an Exception, so `except
        # Exception` in the code does not swallow it.
        class CPUTimeLimitExceeded(BaseException):
            pass

        def on_xcpu(signum, frame):
            raise CPUTimeLimitExceeded("the CPU time limit of %d s%s was reached"
                                       % (cpu, " per call" if mode == "repl" else ""))

        signal.signal(signal.SIGXCPU, on_xcpu)

    def move_cpu_limit():
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = int(usage.ru_utime + usage.ru_stime) + 1
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (used + settings["cpu_seconds"], resource.RLIM_INFINITY))
        except (ValueError, OSError):
            pass

    workdir = os.getcwd()
    status["filesystem_readonly"] = False
    status["private_proc"] = False
    status["capabilities_dropped"] = False
    if settings.get("namespaces") and libc is not None:
        try:
            isolate_filesystem(workdir)
        except OSError as e:
            note("file system isolation failed: %s" % e)
    if libc is not None and sys.platform.startswith("linux"):
        try:
            drop_privileges()
        except OSError as e:
            note("dropping privileges failed: %s" % e)
    apply_limits()

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
            exec(body, namespace)
            if tail is not None:
                sys.displayhook(eval(tail, namespace))
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

    if mode == "stdin":
        source = sys.stdin.read()
        sys.stdin.close()
        sys.stdin = open(os.devnull)
        kind, code = run_cell(source, "<code>")
        leave_if_forked()
        flush()
        sys.exit(code)

    send(status)
    if mode == "oneshot":
        frame = receive()
        if frame is None:
            os._exit(0)
        ctl_in.close()
        os.close(ctl_out)
        kind, code = run_cell(frame["code"], "<code>")
        leave_if_forked()
        flush()
        sys.exit(code)

    while True:
        frame = receive()
        if frame is None:
            flush()
            os._exit(0)
        restore_streams()
        move_cpu_limit()
        kind, code = run_cell(frame["code"], "<cell %d>" % frame["id"])
        leave_if_forked()
        flush()
        restore_streams()
        marker = frame["marker"].encode()
        for fd in (1, 2):
            try:
                os.write(fd, marker)
            except OSError:
                pass
        send({"type": "done", "id": frame["id"], "status": kind, "exit_code": code})


_jarvis_driver()
