"""Python indexing syntax against numpy's."""
import numpy as np
import pytest

import sluice
from conftest import close

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


@pytest.mark.parametrize("key", [
    1, -1, (1, 2), (1, 2, 3), (-1, -2, -3), slice(1, None), (slice(None), slice(None, None, 2)),
    (slice(None, None, -1),), (slice(3, 0, -2), 1), (Ellipsis, None), (None, 0), (Ellipsis, 1), (0, Ellipsis, 2),
    (slice(-2, None), None, slice(None, 3), -1), (slice(10, 20),),
], ids=repr)
def test_basic_indexing_matches_numpy(key):
    close(sluice.Tensor(A)[key], A[key])


def test_integer_tensor_and_list_indices():
    t = sluice.Tensor(A)
    close(t[sluice.Tensor([2, 0, 2])], A[[2, 0, 2]])
    close(t[[1, -1]], A[[1, -1]])
    close(t[:, sluice.Tensor([[0, 1], [3, 3]])], A[:, [[0, 1], [3, 3]]])
    close(t[1][np.array([3, 0])], A[1][[3, 0]])


def test_bad_indices_raise_index_errors():
    t = sluice.Tensor(A)
    with pytest.raises(IndexError, match=r"\[getitem\] index 3 is out of bounds for axis 0 with size 3"):
        t[3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(TypeError, match="must hold integers"):
        t[sluice.Tensor([0.5])]
    with pytest.raises(TypeError):  # no __setitem__: the C++ API has no strided write
        t[0] = 1
