from __future__ import annotations

import errno

import pytest

from agentflow_eval.files.out_of_descriptors import descriptors_exhausted_in


@pytest.mark.parametrize("code", [errno.EMFILE, errno.ENFILE])
def test_too_many_open_files_is_found_behind_what_wrapped_it(code: int) -> None:
    exhausted = OSError(code, "Too many open files", "trials.jsonl")
    try:
        try:
            raise exhausted
        except OSError as exc:
            raise RuntimeError("a library's own error") from exc
    except RuntimeError as wrapped:
        assert descriptors_exhausted_in(wrapped) is exhausted
        group = BaseExceptionGroup("workers", [ValueError("x"), wrapped])
        assert descriptors_exhausted_in(group) is exhausted


def test_other_os_errors_are_not_it() -> None:
    assert descriptors_exhausted_in(OSError(errno.ENOSPC, "No space left on device")) is None
    assert descriptors_exhausted_in(ValueError("Too many open files")) is None
