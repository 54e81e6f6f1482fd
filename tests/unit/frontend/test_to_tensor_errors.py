"""`paddle.to_tensor` of data that is not numbers names the element that is not
(issue 32: a list of strings said only `cannot make a tensor of list data`)."""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle


@pytest.mark.parametrize(("data", "says"), [
    (["a", "b"], r"list data: element \[0\] is a str \('a'\), not a number or bool"),
    ([[1, 2], [3, "x"]], r"element \[1\]\[1\] is a str \('x'\)"),
    ([1.0, None], r"element \[1\] is a NoneType \(None\)"),
    (np.array(["q"]), r"ndarray data: element \[0\] is a str_"),
    ("abc", r"str data: a str \('abc'\) is not a number or bool"),
])
def test_non_numeric_data_names_its_element_type(data: object, says: str) -> None:
    with pytest.raises(TypeError, match=says):
        paddle.to_tensor(data)
