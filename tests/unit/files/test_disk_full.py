import errno

from agentflow_eval.files.disk_full import disk_full_in


def _full(path: str = "/out/run/trials.jsonl") -> OSError:
    return OSError(errno.ENOSPC, "No space left on device", path)


def test_a_full_disk_is_found_behind_what_wrapped_it() -> None:
    try:
        try:
            raise _full()
        except OSError as exc:
            raise RuntimeError("the trials stage failed") from exc
    except RuntimeError as wrapped:
        found = disk_full_in(wrapped)
    assert found is not None and found.filename == "/out/run/trials.jsonl"
    group = ExceptionGroup("stages", [ValueError("x"), RuntimeError("y")])
    group.exceptions[1].__context__ = OSError(errno.EDQUOT, "Disk quota exceeded")
    assert disk_full_in(group) is not None


def test_other_errors_are_not_a_full_disk() -> None:
    assert disk_full_in(OSError(errno.EACCES, "Permission denied")) is None
    assert disk_full_in(RuntimeError("boom")) is None
