"""The one wait of the test harness: poll a condition until it holds, fail with what was awaited.

Every test and harness module waits through ``wait_for``::

    from harness.waiting import wait_for
    wait_for(lambda: query.lastProgress is not None, 90, "the query's first batch")
    wait_for(lambda: len(commits(checkpoint)) >= 4, 120, "4 committed batches", process=driver, log=driver.report)

A wait never sleeps past its deadline and never sleeps when the condition already holds. It fails with
``WaitFailed`` (an ``AssertionError``, so pytest shows it as a failed expectation) when the time is up, or at once
when the process it watches has exited (after one last look at the condition).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Union

__all__ = ["WaitFailed", "wait_for", "text_tail", "QUERY_END_S"]

# How long a test lets a query it expects to end (AvailableNow, Once, one that must fail) run before it fails: sized
# for a machine three times slower than a quiet developer's (CI's lanes run side by side on 2 cores). It only
# lengthens a failing run; a passing one waits for the query, not for this.
QUERY_END_S = 600

# What a failure message shows of a log file.
LOG_TAIL_CHARS = 4000


class WaitFailed(AssertionError):
    """A wait timed out, or the process it watched exited first."""


def text_tail(path: Union[str, Path], chars: int = LOG_TAIL_CHARS) -> str:
    """The last ``chars`` characters of a text file ("" when it cannot be read)."""
    try:
        return Path(path).read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def _exited(process) -> Optional[str]:
    """"NAME exited with CODE" for the first watched process that is no longer running, else None."""
    watched = process if isinstance(process, (list, tuple)) else [process]
    for p in watched:
        code = p.poll()
        if code is not None:
            return f"{getattr(p, 'name', None) or 'the process'} exited with {code}"
    return None


def _show(log) -> str:
    if log is None:
        return ""
    text = log() if callable(log) else text_tail(log)
    return f"\n{text}" if text else ""


def wait_for(condition: Callable[[], Any], timeout: float, what: str, *, interval: float = 0.1,
             process: Union[None, Any, Iterable[Any]] = None,
             log: Union[None, str, Path, Callable[[], str]] = None,
             context: Optional[Callable[[], str]] = None,
             sleep: Callable[[float], Any] = time.sleep) -> Any:
    """Polls ``condition()`` every ``interval`` s until it returns a true value, and returns that value.

    timeout: seconds before the wait fails with ``WaitFailed`` naming ``what``.
    process: something running that the wait depends on (a ``subprocess.Popen``, a ``streaming.Driver``, or a list
        of such): anything with ``poll()`` that returns None while it runs. When one has exited, the condition is
        looked at once more and the wait fails at once if it still does not hold.
    log: shown on failure: a file (its last characters) or a callable returning text (a process's log tail).
    context: a callable whose text follows ``what`` in the failure message (the state at the time of failure).
    sleep: how to pause between looks (``threading.Condition.wait`` wakes up on a notification).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        exited = _exited(process) if process is not None else None
        if exited is not None:
            value = condition()
            if value:
                return value
            state = f" {context()}" if context is not None else ""
            raise WaitFailed(f"{exited} while waiting for {what}{state}{_show(log)}")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            state = f" {context()}" if context is not None else ""
            raise WaitFailed(f"timed out after {timeout:.0f} s waiting for {what}{state}{_show(log)}")
        sleep(min(interval, remaining))
