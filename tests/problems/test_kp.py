import numpy as np

from routecli.problems import KPInstance, Selection, validate


def test_value_and_capacity():
    inst = KPInstance("kp", np.array([0.5, 0.4, 0.3]), np.array([1.0, 2.0, 3.0]), 0.75)
    assert inst.cost(Selection([1, 2])) == 5.0
    assert validate(inst, Selection([1, 2])) == []
    assert validate(inst, Selection([0, 1])) == ["items over capacity by 0.15 (weight 0.9 > 0.75)"]
    assert validate(inst, Selection([0, 0])) == ["item 0 chosen 2 times",
                                                 "items over capacity by 0.25 (weight 1 > 0.75)"]
    assert validate(inst, Selection([5])) == ["item 5 does not exist"]
