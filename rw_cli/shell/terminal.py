"""The controlling terminal's line discipline, adjusted while the shell is not reading input.

Between prompts the terminal is in cooked mode, where the kernel echoes a Ctrl-C as `^C`
(ECHOCTL). In a loop that only Ctrl-C ends (`\\watch`) that echo is noise left in front of
the next prompt, so the loop turns it off and puts it back afterwards, as psql's cancel does
not leave it either.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Iterator


@contextlib.contextmanager
def no_control_echo() -> Iterator[None]:
    """Do not echo control characters (`^C`) typed on stdin's terminal while inside."""
    try:
        import termios
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError, AttributeError):  # not a terminal, or no termios
        yield
        return
    quiet = list(saved)
    quiet[3] = quiet[3] & ~termios.ECHOCTL
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        yield
    finally:
        with contextlib.suppress(OSError):
            termios.tcsetattr(fd, termios.TCSANOW, saved)
