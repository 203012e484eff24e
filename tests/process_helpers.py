"""Code for the child processes tests start: their memory, their signals."""

import signal

#: Source of ``peak_kb()``, to prepend to a child's code: the child's own peak resident memory
#: in KB.  Not ``getrusage``'s ``ru_maxrss``: a child started through vfork and exec (how
#: ``subprocess`` starts one on Linux) inherits its parent's peak there, so a child of a whole
#: test session reported the session's 570 MB where it used 60.  /proc's VmHWM is the child's
#: own; ``ru_maxrss`` stays the answer where there is no /proc.
PEAK_KB = '''
def peak_kb():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource, sys
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes there, KB on Linux
'''


def default_sigint():
    """SIGINT's default action in a child (``preexec_fn``): a launcher that ignores it (a background
    job of a non-interactive shell) passes SIG_IGN on, and Python then raises no KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
