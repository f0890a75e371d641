"""Resumed training runs log every step once (issue 15, item 13)."""

from __future__ import annotations

import json

from routecli.train.runlog import rewind


def test_rewind_drops_records_after_the_checkpoint_step_and_torn_lines(tmp_path):
    log = tmp_path / "log.jsonl"
    records = [{"event": "start", "step": 0}, {"step": 10, "loss": 1.0},
               {"step": 20, "loss": 0.9}, {"step": 20, "val_gap": 5.0}, {"step": 30, "loss": 0.8}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records) + '{"step": 40, "lo')
    assert rewind(log, 20) == 2
    assert [json.loads(line) for line in log.read_text().splitlines()] == records[:4]
    assert rewind(log, 20) == 0
    assert rewind(tmp_path / "absent.jsonl", 5) == 0
