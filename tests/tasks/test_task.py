"""Task keys are stable across runs and machines, and differ where the work differs."""

from __future__ import annotations

from routecli.tasks import task_key


def test_a_key_depends_on_the_work_not_on_the_order_of_its_fields():
    a = task_key("bench", "X-n101-k25-s0", file="X/X-n101-k25.vrp", seed=0, model="hgs")
    b = task_key("bench", "X-n101-k25-s0", model="hgs", seed=0, file="X/X-n101-k25.vrp")
    assert a == b and a.startswith("bench-X-n101-k25-s0-")
    assert task_key("bench", "X-n101-k25-s0", file="X/X-n101-k25.vrp", seed=1, model="hgs") != a


def test_a_label_becomes_a_readable_part_of_the_key():
    key = task_key("pe", "ipe_inv_xpe:xpe_aggregate=mean / seed 2", seed=2)
    assert key.startswith("pe-ipe_inv_xpe-xpe_aggregate-mean-seed-2-")
    assert " " not in key and "/" not in key
