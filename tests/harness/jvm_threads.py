"""What a stuck JVM was doing, for failure messages: jstack of the test's own JVMs, cut to the threads that matter.

A driver or executor that stops making progress under a test's deadline is diagnosed from its threads, not from its
log (which stops too). ``summary`` keeps the threads that run connector code or drive the query (``main``, the
stream execution thread, task threads) with their top frames, and any Java-level deadlock jstack found::

    pids = java_pids_in_group(proc.pid) + java_pids_with_arg(app_id)
    message += summary(pids, save_dir=tmp_path)   # full dumps saved as threads-<pid>.txt

jstack comes with the JDK the tests run on; without it (or once a JVM has gone) the summary says so and is short.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterable, List, Optional

__all__ = ["java_pids_in_group", "java_pids_with_arg", "thread_dump", "summary", "deadlock"]

# Frames kept per thread, and threads worth showing besides those that run connector code (not its shaded libraries'
# threads): those that drive the query.
TOP_FRAMES = 14
QUERY_THREADS = ("stream execution thread", '"main"', "Executor task launch worker")
SUMMARY_CHARS = 12_000


def _run(command: List[str], timeout: float = 30) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def java_pids_in_group(pgid: int) -> List[str]:
    """The java processes of process group ``pgid`` (a driver started in its own session)."""
    return _run(["pgrep", "-g", str(pgid), "java"], timeout=10).split()


def java_pids_with_arg(text: str) -> List[str]:
    """The java processes whose command line holds ``text`` (an application's executors hold its id)."""
    return _run(["pgrep", "-f", f"java.*{text}"], timeout=10).split()


def thread_dump(pid: str) -> str:
    """jstack's dump of JVM ``pid`` ("" when it cannot be had)."""
    return _run(["jstack", pid])


def deadlock(dump: str) -> str:
    """jstack's Java-level deadlock section of ``dump`` ("" when there is none), JDK and Scala frames left out."""
    marker = "Found one Java-level deadlock"
    if marker not in dump:
        return ""
    section = dump[dump.index(marker):]
    return "\n".join(line for line in section.splitlines()
                     if not line.strip().startswith(("at java.", "at scala.")))[:6000]


def _interesting_threads(dump: str) -> List[str]:
    blocks = dump.split("\n\n")
    kept = []
    for block in blocks:
        lines = block.strip().splitlines()
        if not lines or not lines[0].startswith('"'):
            continue
        ours = any(line.strip().startswith("at io.sparkkinesis.") and ".shaded." not in line for line in lines)
        if ours or any(key in block for key in QUERY_THREADS):
            kept.append("\n".join(lines[:TOP_FRAMES + 2]))
    return kept


def summary(pids: Iterable[str], save_dir: Optional[Path] = None) -> str:
    """For each JVM: its deadlock if any, then its interesting threads' top frames; full dumps to ``save_dir``."""
    parts = []
    for pid in pids:
        dump = thread_dump(pid)
        if not dump:
            parts.append(f"--- JVM {pid}: no thread dump (jstack missing, or the JVM has gone)")
            continue
        if save_dir is not None:
            (save_dir / f"threads-{pid}.txt").write_text(dump)
        parts.append(f"--- JVM {pid} ({dump.splitlines()[0].strip()}):")
        found = deadlock(dump)
        if found:
            parts.append(f"Java-level deadlock:\n{found}")
        parts.extend(_interesting_threads(dump))
    return "\n".join(parts)[:SUMMARY_CHARS]
