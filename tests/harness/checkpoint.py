"""Reading Spark's metadata logs from the outside: a streaming checkpoint's offset and commit logs, and a file
sink's ``_spark_metadata`` log.

A checkpoint holds ``offsets/<batch>`` (written before the batch runs: ``v1``, the batch metadata, then one line
per source with that source's end offset), ``commits/<batch>`` (written once the batch has committed), and for
this connector ``sources/<n>/kinesis-initial-offset.json`` (the start pinned before batch 0). Spark writes each
file under a temporary name and renames it, next to a ``.crc`` file: only the numeric names are batches.

The connector's offset is ``{"version": 1, "streams": {stream: {shard: position}}}``, a position being
``{"start": ...}``, ``{"after": seq, "sub": n, "lastSub": bool}`` or ``{"ended": true}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

PathLike = Union[str, Path]
Positions = Dict[str, Dict[str, Any]]

__all__ = [
    "batch_ids", "last_batch", "offset_batches", "commits", "source_offset", "source_offsets", "shard_positions",
    "all_shard_positions", "is_ended", "position_rank", "describe", "file_sink_batches",
]


def batch_ids(folder: PathLike) -> List[int]:
    """The batch ids of a Spark log folder (``offsets/``, ``commits/``, ``_spark_metadata/``), in order."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def last_batch(folder: PathLike) -> int:
    """The highest batch id of a log folder, -1 when it has none."""
    ids = batch_ids(folder)
    return ids[-1] if ids else -1


def offset_batches(checkpoint: PathLike) -> List[int]:
    """The batches planned so far: the ids in the checkpoint's offset log."""
    return batch_ids(Path(checkpoint) / "offsets")


def commits(checkpoint: PathLike) -> List[int]:
    """The batches committed so far: the ids in the checkpoint's commit log."""
    return batch_ids(Path(checkpoint) / "commits")


def source_offset(checkpoint: PathLike, batch: int, source: int = 0) -> Any:
    """The end offset of source number ``source`` in ``batch`` (parsed JSON: a dict for this connector, a number for
    the rate source). Raises ValueError or IndexError while the file is being written."""
    lines = (Path(checkpoint) / "offsets" / str(batch)).read_text().strip().splitlines()
    return json.loads(lines[2 + source])  # "v1", the batch metadata, then one line per source


def source_offsets(checkpoint: PathLike, source: int = 0) -> Dict[int, Any]:
    """``source_offset`` of every batch in the offset log (a batch whose file is being written is left out)."""
    out = {}
    for n in offset_batches(checkpoint):
        try:
            out[n] = source_offset(checkpoint, n, source)
        except (ValueError, IndexError):  # being written (Spark writes a temp file and renames it)
            pass
    return out


def _stream_positions(offset: Dict[str, Any], stream: str) -> Positions:
    assert offset["version"] == 1, offset
    return offset["streams"].get(stream, {})


def shard_positions(checkpoint: PathLike, batch: int, stream: str, source: int = 0) -> Positions:
    """Shard id -> position of ``stream`` in the connector's offset at the end of ``batch``; batch -1: the initial
    offset pinned before batch 0."""
    if batch < 0:
        pinned = Path(checkpoint) / "sources" / str(source) / "kinesis-initial-offset.json"
        return _stream_positions(json.loads(pinned.read_text()), stream)
    return _stream_positions(source_offset(checkpoint, batch, source), stream)


def all_shard_positions(checkpoint: PathLike, stream: str, source: int = 0) -> Dict[int, Positions]:
    """``shard_positions`` of every batch in the offset log (a batch being written is left out)."""
    return {n: _stream_positions(o, stream) for n, o in source_offsets(checkpoint, source).items()}


def is_ended(position: Optional[Dict[str, Any]]) -> bool:
    return bool(position) and position.get("ended") is True


def position_rank(position: Dict[str, Any]) -> Tuple:
    """Orders positions of one shard: any start < after (sequence number, sub-sequence number) < ended."""
    if position.get("ended"):
        return (2,)
    if "after" in position:
        return (1, int(position["after"]), int(position["sub"]))
    return (0,)


def describe(position: Optional[Dict[str, Any]]) -> str:
    """A short readable position: ``absent``, ``ended``, ``after …12345678`` or ``start …``."""
    if position is None:
        return "absent"
    if position.get("ended"):
        return "ended"
    if "after" in position:
        return f"after {position['after'][-8:]}"
    return f"start {position.get('start')}"


def file_sink_batches(output: PathLike) -> Dict[str, int]:
    """File name -> batch id, from a file sink's log (``<output>/_spark_metadata/<batchId>``).

    Needs one log file per batch: a compacted log cannot map files to batches (the test drivers turn compaction off).
    """
    log = Path(output) / "_spark_metadata"
    compacted = sorted(p.name for p in log.iterdir() if p.name.endswith(".compact"))
    assert not compacted, f"the sink log was compacted ({compacted}); files cannot be mapped to batches"
    files: Dict[str, int] = {}
    for batch in batch_ids(log):
        lines = (log / str(batch)).read_text().splitlines()
        assert lines and lines[0].startswith("v"), f"unexpected sink log file {batch}: {lines[:1]}"
        for line in lines[1:]:
            if not line.strip():
                continue
            entry = json.loads(line)
            if entry.get("action", "add") != "add":
                continue
            name = entry["path"].rsplit("/", 1)[-1]
            assert name not in files, f"{name} is listed by batches {files[name]} and {batch}"
            files[name] = batch
    return files
