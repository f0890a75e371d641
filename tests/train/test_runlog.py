"""Resumed training runs log every step once (issue 15, item 13)."""

from __future__ import annotations

import json

from routecli.train.runlog import append, rewind


def test_rewind_drops_records_after_the_checkpoint_step_and_torn_lines(tmp_path):
    log = tmp_path / "log.jsonl"
    records = [{"event": "start", "step": 0}, {"step": 10, "loss": 1.0},
               {"step": 20, "loss": 0.9}, {"step": 20, "val_gap": 5.0}, {"step": 30, "loss": 0.8}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records) + '{"step": 40, "lo')
    assert rewind(log, 20) == 2
    assert [json.loads(line) for line in log.read_text().splitlines()] == records[:4]
    assert rewind(log, 20) == 0
    assert rewind(tmp_path / "absent.jsonl", 5) == 0


def test_records_are_strict_json_with_undefined_numbers_null(tmp_path):
    append(tmp_path / "run" / "log.jsonl", {"step": 1, "best_gap": float("inf"),
                                             "loss": float("nan"), "cost": 2.5})

    def refuse(token: str) -> None:
        raise ValueError(token)

    line = (tmp_path / "run" / "log.jsonl").read_text()
    assert json.loads(line, parse_constant=refuse) == {"step": 1, "best_gap": None,
                                                       "loss": None, "cost": 2.5}
