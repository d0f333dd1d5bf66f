# The confinement half of the jarvis code driver (driver.py is the other;
# jarvis passes both as one `python3 -c` program). _jarvis_confine runs in
# the new process before any of the code exists there: it sets up the file
# system view, drops every privilege, replaces the session keyring and
# installs the seccomp filter, recording in status what it achieved and,
# in status["notes"], why where it fell short. It never raises: whatever
# fails is reported, and jarvis decides (see tools/code/isolation.go)
# whether code may run that way.


def _jarvis_confine(settings, status):
    import errno
    import os
    import sys

    mode = settings["mode"]
    fault = settings.get("test_fault", "")  # set only by jarvis's own tests
    note = status["notes"].append

    libc = None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    except (ImportError, OSError) as e:
        note("ctypes is unavailable (%s): no mount isolation, capability drop or seccomp filter" % e)

    def check(rc, what):
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, "%s: %s" % (what, os.strerror(err)))

    # The architecture decides the seccomp filter and the syscall numbers.
    # Only a 64-bit interpreter on a known 64-bit architecture qualifies: a
    # filter built for the wrong one would kill the driver at once.
    machine = os.uname().machine
    arch = None
    if sys.maxsize > 2 ** 32:
        arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(machine)
    SYSCALLS = {
        "x86_64": {"socket": 41, "socketpair": 53, "add_key": 248, "request_key": 249, "keyctl": 250,
                   "io_uring_setup": 425},
        "aarch64": {"socket": 198, "socketpair": 199, "add_key": 217, "request_key": 218, "keyctl": 219,
                    "io_uring_setup": 425},
    }

    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
    MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18

    def mount(source, target, fstype, flags, data):
        enc = lambda s: None if s is None else s.encode()
        check(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
              "mount %s" % target)

    def set_readonly(path, readonly, recursive):
        # mount_setattr(2) (Linux 5.12): the one call that makes a whole
        # tree read-only, including mounts inherited from the parent
        # namespace. Its number is 442 on every architecture jarvis runs on.
        if fault in ("mount_setattr", "readonly"):
            raise OSError(errno.ENOSYS, "mount_setattr: disabled by a test")

        class MountAttr(ctypes.Structure):
            _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                        ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]

        attr = MountAttr(1, 0, 0, 0) if readonly else MountAttr(0, 1, 0, 0)
        flags = 0x8000 if recursive else 0  # AT_RECURSIVE
        check(libc.syscall(ctypes.c_long(442), ctypes.c_int(-100), path.encode(), ctypes.c_uint(flags),
                           ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr))),
              "make %s %s" % (path, "read-only" if readonly else "writable"))

    def mounts():
        # Every mount in this namespace, from mountinfo(5): (id, parent id,
        # mount point, per-mount options).
        def unescape(s):
            return s.encode().decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")

        out = []
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split(" - ")[0].split()
                if len(fields) >= 6:
                    out.append((int(fields[0]), int(fields[1]), unescape(fields[4]), set(fields[5].split(","))))
        return out

    def visible(table):
        # The mounts a path can still reach, worked out from the table alone
        # (asking the file systems, statfs, could hang on a dead network
        # mount or trigger an automount). A mount is out of reach when
        # another was mounted over its mount point or a directory above it
        # in the same parent mount, when one covers its own root, or when
        # its parent mount is out of reach.
        by_id = {m[0]: m for m in table}
        children = {}
        for m in table:
            children.setdefault(m[1], []).append(m)

        def covers(top, path):
            return top == "/" or path == top or path.startswith(top + "/")

        seen = {}

        def reachable(m):
            mid, parent, point, _ = m
            if mid not in seen:
                seen[mid] = False  # a malformed table must not recurse for ever
                ok = not any(n[0] != mid and covers(n[2], point) for n in children.get(parent, ())) and \
                    not any(n[2] == point for n in children.get(mid, ()))
                seen[mid] = ok and (parent not in by_id or reachable(by_id[parent]))
            return seen[mid]

        return [m for m in table if reachable(m)]

    def remount_readonly(writable):
        # Without mount_setattr: remount every mount read-only, one by one.
        # Setting MS_RDONLY is allowed even on the mounts the parent
        # namespace locked, provided the flags it locked (nosuid, nodev,
        # noexec; atime is kept by leaving its flags out) are passed again.
        # Returns the mount points this user cannot reach at all (a
        # directory above them is closed to it): those need nothing.
        if fault == "readonly":
            raise OSError(errno.EPERM, "remount: disabled by a test")
        unreachable = set()
        for _, _, point, opts in visible(mounts()):
            if point in writable or "ro" in opts:
                continue
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY
            for name, bit in (("nosuid", MS_NOSUID), ("nodev", MS_NODEV), ("noexec", MS_NOEXEC)):
                if name in opts:
                    flags |= bit
            try:
                mount(None, point, None, flags, None)
            except OSError as e:
                if e.errno not in (errno.EACCES, errno.ENOENT, errno.ENOTDIR):
                    raise
                unreachable.add(point)
        return unreachable

    def verify_readonly(writable, unreachable):
        # Whichever way it was done: every mount the code can reach, but the
        # writable ones, must now be read-only.
        still = [point for _, _, point, opts in visible(mounts())
                 if "ro" not in opts and point not in writable and point not in unreachable]
        if still:
            raise OSError(errno.EROFS, "still writable: %s" % ", ".join(sorted(still)[:8]))

    def make_readonly(writable):
        unreachable = set()
        try:
            set_readonly("/", True, True)
            for path in writable:
                set_readonly(path, False, False)
            status["readonly_method"] = "mount_setattr"
        except OSError as e:
            try:
                unreachable = remount_readonly(set(writable))
            except OSError as e2:
                raise OSError(e2.errno, "mount_setattr failed (%s), and so did remounting (%s)" % (e.strerror, e2.strerror))
            status["readonly_method"] = "remount"
            note("mount_setattr is unavailable (%s): each mount was made read-only by remounting it" % e.strerror)
        verify_readonly(set(writable), unreachable)
        status["filesystem_readonly"] = True

    def private_dev(size):
        # A /dev of its own: the host's holds the user's terminals
        # (/dev/pts/N: read the keystrokes, write to the screen) and devices
        # the user's groups open (cameras, sound, disks). It gets the
        # harmless devices, bound from the host's (a user namespace cannot
        # create device nodes), a fresh devpts instance for ptys of its own,
        # and a private /dev/shm.
        PATH = getattr(os, "O_PATH", 0o10000000)
        held = {}
        for name in ("null", "zero", "full", "random", "urandom", "tty"):
            try:
                held[name] = os.open("/dev/" + name, PATH | os.O_CLOEXEC)
            except OSError:
                pass
        try:
            mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=1m,mode=755")
        except OSError as e:
            for fd in held.values():
                os.close(fd)
            note("/dev is not private (%s)" % e.strerror)
            return fallback_pts()
        status["terminals_hidden"] = True
        for name, fd in held.items():
            target = "/dev/" + name
            try:
                os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
                mount("/proc/self/fd/%d" % fd, target, None, MS_BIND, None)
            except OSError as e:
                note("/dev/%s is missing (%s)" % (name, e.strerror))
            finally:
                os.close(fd)
        for link, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"),
                             ("ptmx", "pts/ptmx")):
            os.symlink(target, "/dev/" + link)
        os.mkdir("/dev/pts", 0o755)
        try:
            mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
        except OSError as e:
            note("no pseudo-terminals in the sandbox (%s)" % e.strerror)
        os.mkdir("/dev/shm", 0o1777)
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, size + ",mode=1777")
        status["private_dev"] = True
        return ["/dev/shm"]

    def fallback_pts():
        # /dev stays the host's: at least its terminals go, and /dev/shm
        # becomes private.
        scratch = []
        for fstype, data in (("devpts", "newinstance,ptmxmode=0666,mode=620"), ("tmpfs", "size=4k,mode=755")):
            try:
                mount(fstype, "/dev/pts", fstype, MS_NOSUID | MS_NOEXEC, data)
                status["terminals_hidden"] = True
                break
            except OSError as e:
                note("cannot cover /dev/pts with %s (%s)" % (fstype, e.strerror))
        if os.path.isdir("/dev/shm") and not os.path.islink("/dev/shm"):
            try:
                mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=%d,mode=1777" % settings["tmpfs_bytes"])
                scratch.append("/dev/shm")
            except OSError as e:
                note("/dev/shm is not private (%s)" % e.strerror)
        return scratch

    def isolate_filesystem(workdir):
        # Runs as root of a private user namespace with its own mount and pid
        # namespaces: nothing done here is visible outside.
        mount(None, "/", None, MS_REC | MS_PRIVATE, None)
        try:
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
            status["private_proc"] = True
        except OSError as e:
            note("the host's /proc stays visible (%s)" % e.strerror)
        if os.path.exists("/proc/keys"):
            try:
                # The descriptions of the user's keys are listed there.
                mount("/dev/null", "/proc/keys", None, MS_BIND, None)
            except OSError as e:
                note("/proc/keys stays visible (%s)" % e.strerror)
        keep = [os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix,
                                               os.path.dirname(sys.executable)}]
        wd_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY)
        size = "size=%d" % settings["tmpfs_bytes"]
        scratch = private_dev(size) if os.path.isdir("/dev") else []
        if os.path.isdir("/tmp") and not os.path.islink("/tmp"):
            try:
                mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, size + ",mode=1777")
                scratch.append("/tmp")
            except OSError as e:
                note("/tmp is not private (%s)" % e.strerror)
        covered = set()
        for path in settings["hide"]:
            if not os.path.lexists(path):
                continue  # absent, or behind a directory this user cannot enter
            real = os.path.realpath(path)
            if real in covered:
                continue
            covered.add(real)
            if any(k == real or k.startswith(real + os.sep) for k in keep):
                note("%s is not hidden: the Python installation lives under it" % path)
                status["not_hidden"].append(path)
                continue
            try:
                if os.path.isdir(real):
                    mount("tmpfs", real, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=755")
                else:
                    mount("/dev/null", real, None, MS_BIND, None)
                status["hidden"].append(path)
            except OSError as e:
                note("%s is not hidden (%s)" % (path, e.strerror))
                status["not_hidden"].append(path)
        # The working directory may sit under a path just covered (/tmp):
        # mount it back, by descriptor, at the same path.
        if not os.path.isdir(workdir):
            os.makedirs(workdir, 0o700)
        mount("/proc/self/fd/%d" % wd_fd, workdir, None, MS_BIND, None)
        os.close(wd_fd)
        os.chdir(workdir)
        make_readonly([workdir] + scratch)

    def drop_privileges():
        PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 38, 24, 28
        PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
        prctl = libc.prctl
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

    def private_keyring():
        # The session keyring is inherited: without this the code could read
        # the keys of whoever started jarvis. A new anonymous one replaces
        # it; the seccomp filter then refuses the key syscalls altogether.
        KEYCTL_JOIN_SESSION_KEYRING = 1
        rc = libc.syscall(ctypes.c_long(SYSCALLS[arch]["keyctl"]), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING),
                          ctypes.c_void_p(None))
        if rc < 0:
            err = ctypes.get_errno()
            if err != errno.ENOSYS:  # a kernel without keys has nothing to read
                raise OSError(err, "join a new session keyring: %s" % os.strerror(err))
        status["keyring_private"] = True

    def install_seccomp():
        # A classic BPF program, assembled here: refuse (EPERM) creating
        # Unix sockets, through which the code could reach the host's
        # daemons (a network namespace does not cover the file system's
        # sockets); datagram socket pairs, which can send to any such
        # socket by name; the key management calls; and io_uring, which
        # could create sockets without the socket syscall. Every other call
        # is allowed. A foreign ABI (x32, 32-bit compat) kills the process:
        # its numbers differ, so the checks would not apply.
        import struct

        nr = SYSCALLS[arch]
        audit_arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}[arch]
        LD_ABS, JEQ, JGE, AND, RET = 0x20, 0x15, 0x35, 0x54, 0x06
        ALLOW, KILL, EPERM = 0x7FFF0000, 0x80000000, 0x00050000 | errno.EPERM
        prog = []  # (code, jump-true label, jump-false label, k)

        def op(code, k, jt=None, jf=None):
            prog.append((code, jt, jf, k))

        op(LD_ABS, 4)  # seccomp_data.arch
        op(JEQ, audit_arch, None, "kill")
        op(LD_ABS, 0)  # seccomp_data.nr
        if arch == "x86_64":
            op(JGE, 0x40000000, "kill", None)  # the x32 ABI
        op(JEQ, nr["socket"], "socket", None)
        op(JEQ, nr["socketpair"], "socketpair", None)
        for name in ("keyctl", "add_key", "request_key", "io_uring_setup"):
            op(JEQ, nr[name], "eperm", None)
        op(RET, ALLOW)
        labels = {"socket": len(prog)}
        op(LD_ABS, 16)  # args[0], low half: the domain
        op(JEQ, 1, "eperm", None)  # AF_UNIX
        op(RET, ALLOW)
        labels["socketpair"] = len(prog)
        op(LD_ABS, 24)  # args[1], low half: the type and its flags
        op(AND, 0xF)
        op(JEQ, 2, "eperm", None)  # SOCK_DGRAM
        op(RET, ALLOW)
        labels["eperm"] = len(prog)
        op(RET, EPERM)
        labels["kill"] = len(prog)
        op(RET, KILL)
        code = b""
        for i, (c, jt, jf, k) in enumerate(prog):
            off = lambda label: 0 if label is None else labels[label] - i - 1
            code += struct.pack("=HBBI", c, off(jt), off(jf), k)

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        buf = ctypes.create_string_buffer(code, len(code))
        fprog = SockFprog(len(prog), ctypes.addressof(buf))
        PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
        check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "seccomp filter")
        status["seccomp"] = True

    # Every step reports its failure and the next one still runs: a
    # process with less confinement than it should have must say so, and
    # then be refused by jarvis, rather than crash with a traceback.
    workdir = os.getcwd()
    if settings.get("namespaces") and libc is not None:
        try:
            isolate_filesystem(workdir)
        except Exception as e:
            note("file system isolation failed: %s" % e)
    if libc is not None and sys.platform.startswith("linux"):
        try:
            drop_privileges()
        except Exception as e:
            note("dropping privileges failed: %s" % e)
        if mode != "stdin":  # a container has its own keyring and filter
            if arch is None:
                note("no seccomp filter or private keyring: the architecture %s is not one the filter knows" % machine)
            else:
                for step in (private_keyring, install_seccomp):
                    try:
                        step()
                    except Exception as e:
                        note("%s failed: %s" % (step.__name__.replace("_", " "), e))
    return libc
