"""Python's cyclic garbage collector, paused while `rw` starts.

Starting up creates a few hundred thousand objects that live as long as the process (module
globals, sqlglot's dialect tables, the catalog). Each time allocations pass its threshold the
collector walks them, and its full passes walk all of them, freeing nothing: about 18 ms of
CPU, a fifth of what `rw -c "select 1"` spends beyond importing its libraries. The CLI pauses
the collector when it starts; the first statement to finish (or the shell's first prompt, a
subcommand's start, or the command's end) resumes it, after moving every object alive then
into the permanent generation (`gc.freeze`), so that later full passes skip them too.
"""
from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop automatic collection until `resume` (idempotent)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Collect automatically again, if `pause` stopped it; cheap when it did not."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
