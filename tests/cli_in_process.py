"""`orchestrate` run in the test's own process, as a new process would run it.

`run_here(args, cwd, env, timeout)` calls the CLI's entry (`orchestrator.cli.commands.main`, what
`python -m orchestrator` calls once its signal handlers are in place) with `args` as its argv,
`env` as its whole environment, `cwd` as its directory, stdin from /dev/null, and stdout and
stderr captured at file descriptors 1 and 2 (so what the processes it starts print is captured
too, as with a subprocess's pipes). It returns the exit code and the output, as
`subprocess.run` would.

Then everything the call changed in this process is put back, so that the next call starts as
a new process would (`tests/e2e/cli/test_cli_in_process_e2e.py` holds it to that):
- the environment, the directory, the umask, `sys.argv`, `sys.path`, the standard streams and
  their descriptors, the signal handlers and mask (and `sys.unraisablehook`), warnings filters, logging handlers,
  `tempfile.tempdir` (emptied for the call, so the call's TMPDIR applies);
- what the kernel keeps per process: dumpable (`hide_own_secrets`) and child subreaper
  (`safety.processes.descendants`);
- every module-level name of `orchestrator` and `context_agent` (the program's globals: the
  sandbox's proxy servers, cached secrets, a calibration, flags set for the rest of the
  process), all imported and recorded before the first call;
- what a process's end would do: the `atexit` handlers the call registered run when it returns,
  servers it left serving (`socketserver` threads) are shut down, and a thread it started that
  is still running after that fails the call.

What cannot be made to look like a new process is refused with `NeedsProcess` (never run as a
subprocess behind the test's back): an environment that differs in what is read once per
interpreter (PYTHON*, locale, ANTHROPIC_LOG), or a call from a thread other than the main one.
A test that needs a process of its own (signals, /proc of the CLI, a terminal, a kill, its exit
on Ctrl-C) asks `run_cli(..., process=True)`.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import importlib
import locale
import logging
import os
import pkgutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import traceback
import types
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

PACKAGES = ("orchestrator", "context_agent")
# Read once per interpreter (at start-up or when a library is imported): a call whose
# environment differs from this process's in one of these needs a process of its own.
_READ_ONCE_PREFIXES = ("PYTHON", "LC_")
_READ_ONCE = {"LANG", "LANGUAGE", "ANTHROPIC_LOG"}
_SIGNALS = [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP) and s < signal.SIGRTMIN]
_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3
_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37
_THREAD_GRACE = 10.0  # seconds for the threads a call started to end once their servers are shut down


class NeedsProcess(RuntimeError):
    """This call cannot run in the test's process; the test must ask for one (`process=True`)."""


class _Exited(BaseException):
    """`os._exit(code)` called by the CLI in the main thread: the end of the process it would be."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def why_not_here(cwd: Path, env: Mapping[str, str]) -> str | None:
    """Why `run_here` cannot run this call, or None."""
    if threading.current_thread() is not threading.main_thread():
        return "called from a thread other than the main one (signal handlers can only be set there)"
    if not Path(cwd).is_dir():
        return f"its directory {cwd} does not exist"
    for name in sorted(env.keys() | os.environ.keys()):
        if env.get(name) == os.environ.get(name):
            continue
        if name == "PYTHONPATH" and _already_on_path(env.get(name, "")):
            continue
        if name in _READ_ONCE or name.startswith(_READ_ONCE_PREFIXES):
            return f"its environment sets {name}, read once per interpreter"
    return None


def _already_on_path(value: str) -> bool:
    here = {os.path.realpath(entry or os.getcwd()) for entry in sys.path}
    return all(os.path.realpath(entry) in here for entry in value.split(os.pathsep) if entry)


def run_here(args: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float) -> tuple[int, str, str]:
    """Run `orchestrate ARGS` in this process; (exit code, stdout, stderr). `NeedsProcess` when it
    cannot (`why_not_here`); `subprocess.TimeoutExpired` when it ran past `timeout` (it is then
    interrupted, as Ctrl-C would)."""
    reason = why_not_here(cwd, env)
    if reason is not None:
        raise NeedsProcess(f"orchestrate {' '.join(args)} cannot run in the test's process: {reason}; "
                           "ask for a process of its own: run_cli(..., process=True)")
    globals_before = program_globals()
    with _process_state(cwd, env, args), _captured_output() as output:
        registered: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        threads_before = set(threading.enumerate())
        with _exits_caught(registered), _deadline(timeout) as timed_out:
            code = _call_main()
        _end_like_a_process(registered, threads_before)
    globals_before.restore()
    if timed_out():
        raise subprocess.TimeoutExpired(["orchestrate", *args], timeout, output.stdout, output.stderr)
    return code, output.stdout, output.stderr


def _call_main() -> int:
    from orchestrator.cli.commands import main

    try:
        main()
    except SystemExit as end:
        if end.code is None or isinstance(end.code, int):
            return end.code or 0
        sys.stderr.write(f"{end.code}\n")  # as the interpreter does with `sys.exit("text")`
        return 1
    except _Exited as end:
        return end.code
    except KeyboardInterrupt:
        traceback.print_exc()
        return -signal.SIGINT  # Python ends on an uncaught KeyboardInterrupt by SIGINT
    except BaseException:
        traceback.print_exc()  # as the interpreter does, then exit 1
        return 1
    return 0


@contextlib.contextmanager
def _exits_caught(registered: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]) -> Iterator[None]:
    """`os._exit` in the main thread ends the call, not this process; `atexit` handlers are kept
    for the call's end."""
    real_exit, real_register, real_unregister = os._exit, atexit.register, atexit.unregister

    def exit_here(code: int) -> None:
        if threading.current_thread() is threading.main_thread():
            raise _Exited(code)
        real_exit(code)

    def register(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
        registered.append((function, args, kwargs))
        return function

    def unregister(function: Callable[..., Any]) -> None:
        registered[:] = [entry for entry in registered if entry[0] != function]

    os._exit, atexit.register, atexit.unregister = exit_here, register, unregister  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit, atexit.register, atexit.unregister = real_exit, real_register, real_unregister


@contextlib.contextmanager
def _deadline(timeout: float) -> Iterator[Callable[[], bool]]:
    """Interrupt the call (as Ctrl-C does) if it runs past `timeout`."""
    fired = threading.Event()
    lock = threading.Lock()
    main = threading.main_thread().ident or 0
    running = True

    def interrupt() -> None:
        with lock:
            if running:  # a real SIGINT, so that a blocking read in the main thread is interrupted too
                fired.set()
                signal.pthread_kill(main, signal.SIGINT)

    timer = threading.Timer(timeout, interrupt)
    timer.daemon = True
    timer.start()
    try:
        yield fired.is_set
    finally:
        with lock:
            running = False
        timer.cancel()


def _end_like_a_process(registered: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]],
                        threads_before: set[threading.Thread]) -> None:
    """What the end of the CLI's process would do: its atexit handlers, its threads gone."""
    for function, args, kwargs in reversed(registered):
        try:
            function(*args, **kwargs)
        except Exception:
            traceback.print_exc()  # the interpreter prints an atexit handler's error and goes on
    gc.collect()  # what the call left open (an SDK client's connections) is closed, as at a process's end
    started = [thread for thread in threading.enumerate() if thread not in threads_before]
    # A server thread the call started serves for the CLI; a handler thread of a server that was
    # there before (the fake API's) serves this process, not the CLI.
    servers = {id(server): server for thread in started if (server := _server_of(thread)) is not None
               and thread._target.__name__ == "serve_forever"}  # type: ignore[attr-defined]
    for server in servers.values():
        server.shutdown()
        server.server_close()
    started = [thread for thread in started if (server := _server_of(thread)) is None or id(server) in servers]
    for thread in started:
        thread.join(_THREAD_GRACE)
    left = [thread.name for thread in started if thread.is_alive()]
    if left:
        raise RuntimeError(f"the CLI left threads running after it returned: {left}; a process's end would "
                           "have stopped them, this one cannot (run it with process=True, or stop them)")


def _server_of(thread: threading.Thread) -> socketserver.BaseServer | None:
    server = getattr(getattr(thread, "_target", None), "__self__", None)
    return server if isinstance(server, socketserver.BaseServer) else None


class _Output:
    stdout = ""
    stderr = ""


@contextlib.contextmanager
def _captured_output() -> Iterator[_Output]:
    """stdin from /dev/null; stdout and stderr to files, at the descriptors and as `sys` streams."""
    output = _Output()
    encoding = locale.getpreferredencoding(False)
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        devnull = os.open(os.devnull, os.O_RDONLY)
        for source, fd in ((devnull, 0), (out.fileno(), 1), (err.fileno(), 2)):
            os.dup2(source, fd)
        os.close(devnull)
        sys.stdin = open(0, encoding=encoding, closefd=False)  # noqa: SIM115 (closed below)
        sys.stdout = open(1, "w", encoding=encoding, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115
        try:
            yield output
        finally:
            for stream in (sys.stdout, sys.stderr, sys.stdin):
                with contextlib.suppress(OSError, ValueError):
                    stream.close()  # flushes what the call left buffered
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            for fd, saved in enumerate(saved_fds):
                os.dup2(saved, fd)
                os.close(saved)
            output.stdout, output.stderr = _text(out, encoding), _text(err, encoding)


def _text(file: Any, encoding: str) -> str:
    # What `subprocess.run(text=True)` makes of a pipe's bytes.
    file.seek(0)
    return str(file.read().decode(encoding)).replace("\r\n", "\n").replace("\r", "\n")


@contextlib.contextmanager
def _process_state(cwd: Path, env: Mapping[str, str], args: Sequence[str]) -> Iterator[None]:
    """The call's environment, directory and argv; this process's own put back after it."""
    saved_env, saved_cwd, saved_argv, saved_path = dict(os.environ), os.getcwd(), sys.argv, list(sys.path)
    saved_unraisable_hook = sys.unraisablehook
    saved_umask = os.umask(0)
    os.umask(saved_umask)
    saved_handlers = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    saved_mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    saved_tempdir, saved_filters = tempfile.tempdir, list(warnings.filters)
    saved_logging = _logging_state()
    saved_kernel = _kernel_flags()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = ["orchestrate", *args]
    tempfile.tempdir = None
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        os.umask(saved_umask)
        sys.argv, sys.path[:] = saved_argv, saved_path
        for signum, handler in saved_handlers.items():
            if handler is not None:
                signal.signal(signum, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, saved_mask)
        sys.unraisablehook = saved_unraisable_hook
        tempfile.tempdir = saved_tempdir
        warnings.filters[:] = saved_filters
        _restore_logging(saved_logging)
        _set_kernel_flags(saved_kernel)
        _forget_aws_sessions()


def _forget_aws_sessions() -> None:
    """The SDK's boto3 sessions (Bedrock), cached by explicit keys, keep the credentials they first
    read from the environment: a later call must read its own, as a new process would."""
    auth = sys.modules.get("anthropic.lib.aws._auth")
    if auth is not None:
        auth._get_session.cache_clear()


def _logging_state() -> dict[str, tuple[int, list[logging.Handler], bool]]:
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in list(logging.root.manager.loggerDict))]
    return {logger.name: (logger.level, list(logger.handlers), logger.propagate) for logger in loggers}


def _restore_logging(saved: dict[str, tuple[int, list[logging.Handler], bool]]) -> None:
    for name in list(logging.root.manager.loggerDict):
        if name not in saved:
            logging.getLogger(name).handlers[:] = []
    for name, (level, handlers, propagate) in saved.items():
        logger = logging.getLogger() if name == "root" else logging.getLogger(name)
        logger.setLevel(level)
        logger.handlers[:] = handlers
        logger.propagate = propagate


def _prctl() -> Any:
    return ctypes.CDLL(None, use_errno=True).prctl


def _kernel_flags() -> tuple[int, int]:
    """(dumpable, child subreaper) of this process."""
    prctl = _prctl()
    subreaper = ctypes.c_int(0)
    prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(subreaper), 0, 0, 0)
    return int(prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)), subreaper.value


def _set_kernel_flags(flags: tuple[int, int]) -> None:
    prctl = _prctl()
    prctl(_PR_SET_DUMPABLE, flags[0], 0, 0, 0)
    prctl(_PR_SET_CHILD_SUBREAPER, flags[1], 0, 0, 0)


class ProgramGlobals:
    """Every module-level name of the program's modules, as it was: `restore` puts it back (a
    dict, list or set its contents too, since the modules mutate them in place)."""

    def __init__(self, modules: list[types.ModuleType]) -> None:
        self.saved = {module: {name: (value, _copied(value)) for name, value in vars(module).items()
                               if not name.startswith("__")} for module in modules}

    def restore(self) -> None:
        for module, names in self.saved.items():
            space = vars(module)
            for name in [name for name in space if not name.startswith("__") and name not in names]:
                del space[name]
            for name, (value, contents) in names.items():
                space[name] = value
                if contents is not None:
                    _put_back(value, contents)


def _copied(value: Any) -> Any:
    if isinstance(value, (dict, list, set, bytearray)):
        return value.copy()
    if _program_object(value):  # a module-level instance of the program's (a registry, a cache)
        return _Attributes({name: (item, _copied(item)) for name, item in vars(value).items()})
    return None


class _Attributes(dict[str, Any]):
    """An object's attributes as they were, with copies of their contents."""


def _program_object(value: Any) -> bool:
    kind = type(value)
    return (kind.__module__.split(".")[0] in PACKAGES and hasattr(value, "__dict__")
            and not isinstance(value, (type, types.ModuleType, types.FunctionType)))


def _put_back(value: Any, contents: Any) -> None:
    if isinstance(contents, _Attributes):
        vars(value).clear()
        for name, (item, item_contents) in contents.items():
            vars(value)[name] = item
            if item_contents is not None:
                _put_back(item, item_contents)
    elif isinstance(value, dict):
        value.clear()
        value.update(contents)
    elif isinstance(value, set):
        value.clear()
        value |= contents
    else:
        value[:] = contents


_imported = False


def program_globals() -> ProgramGlobals:
    """Every module of the program imported (once: a module first imported inside a call could
    not be put back as it was), then their globals recorded."""
    global _imported
    if not _imported:
        for package in PACKAGES:
            root = importlib.import_module(package)
            for info in pkgutil.walk_packages(root.__path__, f"{package}."):
                if not info.name.endswith("__main__"):
                    with contextlib.suppress(ImportError):  # an extra not installed (claude-agent-sdk)
                        importlib.import_module(info.name)
        # What is imported lives as long as the process: out of the collector's way, so that the
        # collection after each call (`_end_like_a_process`) looks only at what came after.
        gc.freeze()
        _imported = True
    modules = [module for name, module in sorted(sys.modules.items())
               if module is not None and name.split(".")[0] in PACKAGES]
    return ProgramGlobals(modules)
