"""Per-key order of a real-time Kinesis-to-Kinesis pipeline as a KCL-style consumer reads it, across a split of
the input and of the output and a driver SIGKILL (issue 39, "Done when").

A writer puts records of 12 keys, each key's records numbered, a fifth of them as KPL aggregates of one key
(aws-kinesis-agg), into a 2-shard input stream, all through the test. One driver process runs two real-time
queries (5-second batches) that copy the input into two outputs, each with `ordering=perKey`: one writes plain
records, one `aggregation=kpl`. While they run, one shard of the input and one of each output are split; after
a batch of the queries has committed past the split, the driver is SIGKILLed (JVM included) and started again
from its checkpoints. When the writer has stopped and both outputs hold every record, each output is read as the
KCL reads (parents first, KPL de-aggregated, sub-records outside their shard's range dropped) and compared with
the input read the same way: every record is there, and no key's record is read for the first time after a later
record of its key (records read again, the replays of at-least-once, are allowed).
"""

from __future__ import annotations

import threading
from typing import Callable

import pytest

from conftest import connector_options, pyspark_line
from harness import checkpoint as spark_log
from harness import ordering, streams
from harness.streaming import DRIVERS_DIR, drivers  # noqa: F401 (drivers: pytest fixture)

ORDERED_DRIVER = DRIVERS_DIR / "ordered_realtime_driver.py"
KEYS = 12
PER_TICK = 20  # records every 0.1 s: 200 records/s
MAX_TICKS = 7200  # the writer stops after 12 minutes whatever happens (40 to 80 s for the whole test here)
MAX_AHEAD = 2000  # the writer waits while it is this many records ahead of an output: a slow machine's queries
START_TIMEOUT_S = 300.0
RUN_TIMEOUT_S = 300.0  # 80 s for the whole test here; CI machines have been 2-3 times slower
SINKS = {"plain": {"ordering": "perKey"}, "kpl": {"ordering": "perKey", "aggregation": "kpl"}}


class TickWriter:
    """Puts ``ordering.tick_entries`` every 0.1 s in a background thread until stopped (at most MAX_TICKS ticks),
    skipping the ticks at which ``read()`` (the fewest records an output holds) is MAX_AHEAD behind: on a slow machine
    the input does not outgrow what the queries and the test's reads of the outputs can keep up with."""

    def __init__(self, kinesis, stream: str, read: Callable[[], int]):
        self.kinesis, self.stream, self.read = kinesis, stream, read
        self.written = 0
        self.error = None
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"ticks-{stream}", daemon=True)

    def _run(self) -> None:
        try:
            for _ in range(MAX_TICKS):
                if self.written - self.read() < MAX_AHEAD:
                    streams.put_records(self.kinesis, self.stream, ordering.tick_entries(self.written, PER_TICK, KEYS))
                    self.written += PER_TICK
                if self.stopped.wait(0.1):
                    return
        except BaseException as e:  # noqa: BLE001 - reported by stop()
            self.error = e

    def stop(self) -> int:
        self.stopped.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), "the writer did not stop"
        if self.error is not None:
            raise AssertionError(f"the writer failed: {self.error!r}") from self.error
        return self.written


def _holding(outputs, at_least: int) -> bool:
    """Whether every output holds ``at_least`` distinct records (each tail reads on from its last poll)."""
    counts = [tail.poll() for tail in outputs]  # every tail, so that each reads on (and says what it holds)
    return all(count >= at_least for count in counts)


@pytest.mark.skipif(pyspark_line() < (4, 2), reason="PySpark takes trigger(realTime=...) from 4.2")
def test_per_key_order_holds_across_a_split_and_a_driver_kill(kinesalite_server, stream_name, tmp_path,
                                                              drivers):  # noqa: F811
    kinesis = streams.client(kinesalite_server)
    source = f"{stream_name}-in"
    outputs = {kind: f"{stream_name}-{kind}" for kind in SINKS}
    for name in [source, *outputs.values()]:
        streams.create_stream(kinesis, name, 2)
    config = {"connection": connector_options(kinesalite_server), "input": source, "batch_duration": "5 seconds",
              "slots": 8, "max_seconds": 1200,
              "outputs": [{"stream": outputs[kind], "sink": SINKS[kind], "checkpoint": str(tmp_path / kind)}
                          for kind in SINKS]}
    tails = [ordering.KclTail(kinesis, o) for o in outputs.values()]
    writer = TickWriter(kinesis, source, read=lambda: min(len(tail.data) for tail in tails))

    def state() -> str:
        return f"; {writer.written} records written, the outputs hold {[len(t.data) for t in tails]}"

    writer.thread.start()
    try:
        first = drivers("first", ORDERED_DRIVER, config)
        first.await_started(START_TIMEOUT_S)
        first.wait_until(lambda: _holding(tails, 400), START_TIMEOUT_S, "400 records in each output", interval=2.0,
                         context=state)

        for name in [source, *outputs.values()]:
            streams.split_in_half(kinesis, name, "shardId-000000000000")
        at_split = writer.written
        # Records written after the split came through both queries, and each committed a batch planned after it.
        first.wait_until(lambda: _holding(tails, at_split + 200), RUN_TIMEOUT_S,
                         "the records written after the split in each output", interval=2.0, context=state)
        committed = {kind: max(spark_log.commits(tmp_path / kind), default=-1) for kind in SINKS}
        first.wait_until(lambda: all(max(spark_log.commits(tmp_path / kind), default=-1) > committed[kind]
                                     for kind in SINKS), RUN_TIMEOUT_S, "a batch committed after the split",
                         interval=0.2)
        first.kill()

        second = first.restart("second")
        second.await_started(START_TIMEOUT_S)
        at_restart = writer.written
        second.wait_until(lambda: _holding(tails, at_restart + 200), RUN_TIMEOUT_S,
                          "records written after the restart in each output", interval=2.0, context=state)
        written = writer.stop()
        expected = ordering.read_as_kcl(kinesis, source)[0]
        assert len({r["data"] for r in expected}) == written, "the input does not hold what the writer put"
        second.wait_until(lambda: _holding(tails, written), RUN_TIMEOUT_S,
                          "every record in each output", interval=1.0, context=state)
        assert second.stop(RUN_TIMEOUT_S) == 0, second.report()
    finally:
        writer.stopped.set()

    in_order = ordering.by_key(expected)
    for kind, stream in outputs.items():
        read, dropped = ordering.read_as_kcl(kinesis, stream)
        missing, broken = ordering.violations(in_order, ordering.by_key(read))
        assert missing == [], f"{kind}: {len(missing)} records missing, e.g. {missing[:5]}"
        assert broken == [], f"{kind}: {len(broken)} order violations, e.g. {broken[:5]}"
        print(f"\n{kind}: {len(read)} records read for {written} written; {dropped} sub-records dropped by range")
