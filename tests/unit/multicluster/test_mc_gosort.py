"""Go's sort.Sort, reproduced: equal elements must come out where Go's pdqsort leaves them.

The expected orders were produced by Go 1.26's ``sort.Sort`` on the same inputs (``Less`` = key
descending); a stable sort gives another order for each of them.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extender.multicluster.gosort import go_sort

GO_ORDERS: list[tuple[list[int], list[int]]] = [
    ([2, 1, 3, 0, 0, 0, 2, 0, 1, 0, 0, 3, 3], [2, 12, 11, 0, 6, 8, 1, 3, 7, 9, 10, 5, 4]),
    ([0, 1, 0, 3, 0, 0, 1, 0, 3, 0, 1, 0, 1, 2, 3, 1, 0, 2, 1, 0],
     [8, 14, 3, 17, 13, 15, 12, 18, 1, 6, 10, 9, 11, 4, 2, 0, 16, 5, 7, 19]),
    ([1, 2, 0, 0, 0, 1, 3, 3, 2, 3, 3, 2, 2, 1, 1, 1, 0, 2, 3, 2, 3, 2, 0, 0, 3, 1, 2, 1, 3, 3, 0, 0, 2, 2, 2, 3, 3,
      0, 0, 2, 3, 0, 0, 2, 3, 2, 3, 2, 0, 3, 2, 1, 0, 3, 0, 1, 2, 1, 1, 3],
     [28, 9, 59, 36, 53, 29, 6, 7, 35, 10, 18, 40, 24, 49, 44, 46, 20, 8, 17, 19, 45, 21, 47, 43, 12, 11, 26, 39, 34,
      50, 56, 1, 32, 33, 15, 0, 58, 57, 55, 27, 25, 51, 5, 13, 14, 41, 52, 22, 48, 23, 42, 31, 16, 4, 54, 38, 3, 37,
      30, 2]),
]


@pytest.mark.parametrize(("keys", "want"), GO_ORDERS, ids=[f"{len(k)} elements" for k, _ in GO_ORDERS])
def test_ties_fall_where_go_leaves_them(keys: list[int], want: list[int]) -> None:
    items = list(enumerate(keys))
    go_sort(items, lambda a, b: a[1] > b[1])
    assert [i for i, _k in items] == want
    assert [i for i, _k in sorted(enumerate(keys), key=lambda p: -p[1])] != want


@given(st.lists(st.integers(0, 50), max_size=300))
def test_sorts_like_any_sort_up_to_ties(keys: list[int]) -> None:
    items = list(keys)
    go_sort(items, lambda a, b: a > b)
    assert items == sorted(keys, reverse=True)


def test_up_to_twelve_elements_is_stable() -> None:
    items = [(i, i % 3) for i in range(12)]
    go_sort(items, lambda a, b: a[1] > b[1])
    assert items == sorted(items, key=lambda p: -p[1])
