"""runtime/native/env.py: integer and on/off settings from environment variables."""

from __future__ import annotations

import pytest

from pullback.runtime.native import threadpool
from pullback.runtime.native import bf16_gemm
from pullback.runtime.gpu import replay
from pullback.runtime.native.env import flag_setting, int_setting


def test_int_setting_reads_validates_and_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PB_TEST_N", raising=False)
    assert int_setting("PB_TEST_N") is None
    monkeypatch.setenv("PB_TEST_N", "  ")
    assert int_setting("PB_TEST_N") is None
    monkeypatch.setenv("PB_TEST_N", " 7 ")
    assert int_setting("PB_TEST_N") == 7
    monkeypatch.setenv("PB_TEST_N", "0")
    assert int_setting("PB_TEST_N", minimum=0) == 0
    with pytest.raises(ValueError, match=r"PB_TEST_N must be a positive integer, got '0'"):
        int_setting("PB_TEST_N")
    monkeypatch.setenv("PB_TEST_N", "many")
    with pytest.raises(ValueError, match=r"PB_TEST_N must be a byte count, got 'many'"):
        int_setting("PB_TEST_N", what="a byte count")
    monkeypatch.setenv("PB_TEST_N", "4,2")
    assert int_setting("PB_TEST_N", first_of_list=True) == 4
    with pytest.raises(ValueError, match="PB_TEST_N must be a positive integer, got '4,2'"):
        int_setting("PB_TEST_N")


def test_thread_count_settings_go_through_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULLBACK_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3,1")
    assert threadpool.default_num_threads() == 3
    monkeypatch.setenv("PULLBACK_NUM_THREADS", "-2")
    with pytest.raises(ValueError, match="PULLBACK_NUM_THREADS must be a positive number of threads, got '-2'"):
        threadpool.default_num_threads()


def test_flag_setting_reads_on_off_and_refuses_anything_else(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PB_TEST_F", raising=False)
    assert flag_setting("PB_TEST_F", True) is True and flag_setting("PB_TEST_F", False) is False
    for on in ("1", "true", "On", " yes "):
        monkeypatch.setenv("PB_TEST_F", on)
        assert flag_setting("PB_TEST_F", False) is True
    for off in ("0", "FALSE", "off", "no"):
        monkeypatch.setenv("PB_TEST_F", off)
        assert flag_setting("PB_TEST_F", True) is False
    monkeypatch.setenv("PB_TEST_F", "2")
    with pytest.raises(ValueError, match=r"PB_TEST_F must be 0 or 1, got '2'"):
        flag_setting("PB_TEST_F", True)


def test_switches_go_through_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # (PULLBACK_EAGER_NATIVE and PULLBACK_EAGER_LAZY are read when their modules load.)
    monkeypatch.setenv("PULLBACK_GPU_REPLAY", "off")
    assert replay.enabled() is False
    monkeypatch.setenv("PULLBACK_BF16_GEMM", "nope")
    with pytest.raises(ValueError, match="PULLBACK_BF16_GEMM must be 0 or 1"):
        bf16_gemm.enabled()
