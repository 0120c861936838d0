"""Checkpoints: safetensors *.ckpt, optimizer state, encryption, atomic and async writes."""

from __future__ import annotations

import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch

from sumlens.train import (
    CheckpointError,
    CheckpointFormatError,
    CheckpointIntegrityError,
    CheckpointMismatchError,
    load_checkpoint,
    load_param_into_net,
    save_checkpoint,
    wait_for_pending_saves,
)
from sumlens.train import checkpoint as ckpt_mod
from sumlens.train.atomic import atomic_write

MODES = ["AES-GCM", "AES-CBC"]


def _net(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 2)
    )


def _assert_same_state(a: torch.nn.Module, b: torch.nn.Module) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for name in sa:
        assert torch.equal(sa[name], sb[name]), name


def _flip(path: Path, offset: int) -> None:
    os.chmod(path, 0o600)
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


# --------------------------------------------------------------------------- round trips


def test_module_round_trip_and_file_properties(tmp_path: Path) -> None:
    net = _net(1)
    handle = save_checkpoint(net, tmp_path / "model")
    path = tmp_path / "model.ckpt"
    assert handle.wait() == str(path)
    assert path.is_file()
    assert (path.stat().st_mode & 0o777) == 0o400
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    loaded = load_checkpoint(path)
    assert list(loaded) == list(net.state_dict())  # saved order kept
    fresh = _net(2)
    param_not_load, ckpt_not_load = load_param_into_net(fresh, loaded)
    assert param_not_load == [] and ckpt_not_load == []
    _assert_same_state(net, fresh)
    # overwriting an existing (read-only) checkpoint works
    save_checkpoint(fresh, path)
    assert set(load_checkpoint(path)) == set(net.state_dict())


def test_state_dict_and_list_forms(tmp_path: Path) -> None:
    values = {
        "a": torch.arange(6, dtype=torch.int64).reshape(2, 3),
        "b": torch.randn(3, 2).t(),  # non-contiguous
        "c": torch.tensor(True),
        "d": torch.randn(4, dtype=torch.float64).to(torch.bfloat16),
    }
    save_checkpoint(values, tmp_path / "sd.ckpt")
    as_list = [{"name": k, "data": v} for k, v in values.items()]
    save_checkpoint(as_list, tmp_path / "ls.ckpt")
    for name in ("sd.ckpt", "ls.ckpt"):
        loaded = load_checkpoint(tmp_path / name)
        assert list(loaded) == list(values)
        for k, v in values.items():
            assert loaded[k].dtype == v.dtype and torch.equal(loaded[k], v)


def test_shared_storage_is_saved(tmp_path: Path) -> None:
    w = torch.randn(3, 3)
    save_checkpoint({"enc.w": w, "dec.w": w}, tmp_path / "tied.ckpt")
    loaded = load_checkpoint(tmp_path / "tied.ckpt")
    assert torch.equal(loaded["enc.w"], w) and torch.equal(loaded["dec.w"], w)


def test_append_dict_round_trip(tmp_path: Path) -> None:
    append = {
        "epoch_num": 3,
        "step_num": 42,
        "lr": 0.5,
        "flag": True,
        "tag": "x",
        "t": torch.ones(2),
    }
    save_checkpoint(_net(), tmp_path / "a.ckpt", append_dict=append)
    loaded = load_checkpoint(tmp_path / "a.ckpt")
    for k, v in append.items():
        if isinstance(v, torch.Tensor):
            assert torch.equal(loaded[k], v)
        else:
            assert loaded[k] == v and type(loaded[k]) is type(v)
    fresh = _net(5)
    param_not_load, ckpt_not_load = load_param_into_net(fresh, loaded)
    assert param_not_load == [] and ckpt_not_load == ["t"]  # scalars are not reported


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
        lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.95)),
    ],
    ids=["sgd-momentum", "adam"],
)
def test_optimizer_state_resume_is_exact(tmp_path: Path, make_opt) -> None:
    torch.manual_seed(0)
    x, y = torch.randn(16, 4), torch.randn(16, 2)

    def step(net: torch.nn.Module, opt: torch.optim.Optimizer) -> None:
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        opt.step()

    net = _net(3)
    opt = make_opt(net.parameters())
    for _ in range(3):
        step(net, opt)
    save_checkpoint(net, tmp_path / "r.ckpt", optimizer=opt, append_dict={"step_num": 3})
    step(net, opt)  # the uninterrupted run

    fresh = _net(9)
    fresh_opt = make_opt(fresh.parameters())
    loaded = load_checkpoint(tmp_path / "r.ckpt", net=fresh, optimizer=fresh_opt)
    assert loaded["step_num"] == 3
    assert not any(k.startswith("__") for k in loaded)
    assert fresh_opt.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    step(fresh, fresh_opt)
    _assert_same_state(net, fresh)


def test_load_optimizer_from_checkpoint_without_one(tmp_path: Path) -> None:
    save_checkpoint(_net(), tmp_path / "n.ckpt")
    opt = torch.optim.SGD(_net().parameters(), lr=0.1)
    with pytest.raises(CheckpointError, match="no optimizer state"):
        load_checkpoint(tmp_path / "n.ckpt", optimizer=opt)


def test_filters(tmp_path: Path) -> None:
    save_checkpoint(_net(), tmp_path / "f.ckpt", append_dict={"epoch_num": 1})
    path = tmp_path / "f.ckpt"
    assert set(load_checkpoint(path, specify_prefix="0.")) == {"0.weight", "0.bias"}
    assert not any(
        k.startswith(("1.", "2.")) for k in load_checkpoint(path, filter_prefix=["1.", "2."])
    )
    only_bias = load_checkpoint(path, choice_func=lambda n: n.endswith("bias"))
    assert set(only_bias) == {"0.bias", "1.bias", "2.bias"}


# --------------------------------------------------------------------------- load_param_into_net


def test_load_param_into_net_reporting() -> None:
    src = _net(1)
    state = dict(src.state_dict())
    state.pop("2.bias")
    state["extra.w"] = torch.zeros(1)
    dst = _net(2)
    param_not_load, ckpt_not_load = load_param_into_net(dst, state, strict_load=True)
    assert param_not_load == ["2.bias"] and ckpt_not_load == ["extra.w"]
    assert torch.equal(dst[0].weight, src[0].weight)


def test_load_param_into_net_prefix_and_dtype() -> None:
    src = _net(1)
    prefixed = {f"network.{k}": v for k, v in src.state_dict().items()}
    dst = _net(2)
    param_not_load, ckpt_not_load = load_param_into_net(dst, prefixed, strict_load=True)
    assert len(param_not_load) == len(src.state_dict()) and len(ckpt_not_load) == len(prefixed)
    assert load_param_into_net(dst, prefixed) == ([], [])
    _assert_same_state(src, dst)

    half = {"0.weight": torch.ones(8, 4, dtype=torch.float16)}
    assert load_param_into_net(dst, half)[1] == []
    assert dst[0].weight.dtype == torch.float32 and torch.all(dst[0].weight == 1)
    with pytest.raises(CheckpointMismatchError, match="dtype"):
        load_param_into_net(dst, half, strict_load=True)
    with pytest.raises(CheckpointMismatchError, match="dtype"):
        load_param_into_net(dst, {"0.weight": torch.ones(8, 4, dtype=torch.int32)})


def test_load_param_into_net_shape_mismatch_changes_nothing() -> None:
    dst = _net(2)
    before = {k: v.clone() for k, v in dst.state_dict().items()}
    bad = {"0.bias": torch.full((8,), 7.0), "2.weight": torch.zeros(3, 3)}
    with pytest.raises(CheckpointMismatchError, match=r"2\.weight") as info:
        load_param_into_net(dst, bad)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    for k, v in dst.state_dict().items():
        assert torch.equal(v, before[k])


def test_load_param_into_net_bad_arguments() -> None:
    with pytest.raises(TypeError, match="net"):
        load_param_into_net({}, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="parameter_dict"):
        load_param_into_net(_net(), [1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="strict_load"):
        load_param_into_net(_net(), {}, strict_load=1)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- encryption


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("key_len", [16, 24, 32])
def test_encrypted_round_trip(tmp_path: Path, mode: str, key_len: int) -> None:
    net, key = _net(1), os.urandom(key_len)
    path = tmp_path / "e.ckpt"
    save_checkpoint(net, path, enc_key=key, enc_mode=mode, append_dict={"epoch_num": 2})
    raw = path.read_bytes()
    assert raw[:4] == b"MSPT" and b"weight" not in raw
    fresh = _net(2)
    loaded = load_checkpoint(path, net=fresh, dec_key=key, dec_mode=mode)
    assert loaded["epoch_num"] == 2
    _assert_same_state(net, fresh)


@pytest.mark.parametrize("mode", MODES)
def test_encrypted_multi_chunk(tmp_path: Path, mode: str, monkeypatch) -> None:
    from sumlens.train import crypto

    original = crypto.encrypt_payload

    def small_chunks(out, pieces, key, m, *, chunk_size=crypto.CHUNK_SIZE):
        return original(out, pieces, key, m, chunk_size=1000)

    monkeypatch.setattr(crypto, "encrypt_payload", small_chunks)
    values = {"w": torch.randn(5000)}
    key = os.urandom(32)
    path = tmp_path / "m.ckpt"
    save_checkpoint(values, path, enc_key=key, enc_mode=mode)
    assert torch.equal(load_checkpoint(path, dec_key=key, dec_mode=mode)["w"], values["w"])
    # dropping the last record (truncation at a record boundary) is detected
    raw = path.read_bytes()
    os.chmod(path, 0o600)
    path.write_bytes(raw[: len(raw) - (1028 + (32 if mode == "AES-CBC" else 0))])
    with pytest.raises(CheckpointIntegrityError):
        load_checkpoint(path, dec_key=key, dec_mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_flipped_byte_rejected_encrypted(tmp_path: Path, mode: str) -> None:
    key = os.urandom(16)
    path = tmp_path / "x.ckpt"
    save_checkpoint(_net(), path, enc_key=key, enc_mode=mode)
    size = path.stat().st_size
    for offset in (6, 10, 30, size // 2, size - 1):
        save_checkpoint(_net(), path, enc_key=key, enc_mode=mode)
        _flip(path, offset)
        with pytest.raises(CheckpointIntegrityError, match="wrong dec_key or damaged") as info:
            load_checkpoint(path, dec_key=key, dec_mode=mode)
        assert str(path) in str(info.value) and isinstance(info.value, ValueError)


def test_flipped_byte_rejected_plain(tmp_path: Path) -> None:
    path = tmp_path / "p.ckpt"
    save_checkpoint(_net(), path)
    size = path.stat().st_size
    (n,) = __import__("struct").unpack("<Q", path.read_bytes()[:8])
    for offset in (0, 3, 9, 20, 8 + n // 2, 8 + n + 5, size - 1):
        save_checkpoint(_net(), path)
        _flip(path, offset)
        with pytest.raises(CheckpointError) as info:
            load_checkpoint(path)
        assert str(path) in str(info.value)


@pytest.mark.parametrize("renamed", [b"sumlens.crc33", b"xumlens.crc32", b"sumlens_crc32"])
@pytest.mark.parametrize("flip_weight", [False, True])
def test_a_renamed_crc_key_is_refused(tmp_path: Path, renamed: bytes, flip_weight: bool) -> None:
    path = tmp_path / "r.ckpt"
    save_checkpoint(_net(), path)
    os.chmod(path, 0o600)
    raw = path.read_bytes()
    assert raw.count(b'"sumlens.crc32"') == 1
    data = bytearray(raw.replace(b'"sumlens.crc32"', b'"' + renamed + b'"'))
    if flip_weight:  # the damage the CRC is there to catch
        (n,) = struct.unpack("<Q", raw[:8])
        data[8 + n + 3] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointIntegrityError) as info:
        load_checkpoint(path)
    message = str(info.value)
    assert str(path) in message and "'sumlens.crc32' field" in message and "missing" in message


def test_foreign_safetensors_files_without_a_crc_still_load(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    values = {"fc.weight": torch.randn(3, 2), "fc.bias": torch.randn(3)}
    for metadata in (None, {"format": "pt", "source": "another tool"}):
        path = tmp_path / f"foreign-{metadata is None}.safetensors"
        save_file(values, path, metadata=metadata)
        loaded = load_checkpoint(path)
        assert set(loaded) == set(values)
        for name, value in values.items():
            assert torch.equal(loaded[name], value), name


@pytest.mark.parametrize("mode", MODES)
def test_wrong_or_missing_key(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "k.ckpt"
    save_checkpoint(_net(), path, enc_key=b"0" * 32, enc_mode=mode)
    with pytest.raises(CheckpointIntegrityError, match="wrong dec_key"):
        load_checkpoint(path, dec_key=b"1" * 32, dec_mode=mode)
    with pytest.raises(CheckpointIntegrityError, match="wrong dec_key"):
        load_checkpoint(path, dec_key=b"0" * 16, dec_mode=mode)
    with pytest.raises(CheckpointError, match="encrypted; pass dec_key"):
        load_checkpoint(path)
    other = "AES-CBC" if mode == "AES-GCM" else "AES-GCM"
    with pytest.raises(CheckpointError, match=f"encrypted with {mode}"):
        load_checkpoint(path, dec_key=b"0" * 32, dec_mode=other)


def test_dec_key_for_plain_file_is_refused(tmp_path: Path) -> None:
    save_checkpoint(_net(), tmp_path / "p.ckpt")
    with pytest.raises(CheckpointError, match="not encrypted"):
        load_checkpoint(tmp_path / "p.ckpt", dec_key=b"0" * 16)


# --------------------------------------------------------------------------- bad arguments


def test_bad_arguments(tmp_path: Path) -> None:
    p = tmp_path / "b.ckpt"
    with pytest.raises(ValueError, match=r"enc_key must be 16, 24 or 32 bytes.*got 15"):
        save_checkpoint(_net(), p, enc_key=b"x" * 15)
    with pytest.raises(TypeError, match="enc_key"):
        save_checkpoint(_net(), p, enc_key="secret" * 4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"enc_mode must be one of.*'SM4-CBC'"):
        save_checkpoint(_net(), p, enc_key=b"x" * 16, enc_mode="SM4-CBC")
    with pytest.raises(TypeError, match="enc_mode"):
        save_checkpoint(_net(), p, enc_mode=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="save_obj"):
        save_checkpoint(3, p)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"save_obj\[0\]"):
        save_checkpoint([{"name": "a"}], p)
    with pytest.raises(TypeError, match="'a'"):
        save_checkpoint({"a": [1, 2]}, p)
    with pytest.raises(ValueError, match="async_save"):
        save_checkpoint(_net(), p, async_save="fork")
    with pytest.raises(TypeError, match="integrated_save"):
        save_checkpoint(_net(), p, integrated_save="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="append_dict"):
        save_checkpoint(_net(), p, append_dict={"x": [1]})
    with pytest.raises(ValueError, match="clashes"):
        save_checkpoint(_net(), p, append_dict={"0.weight": 1})
    with pytest.raises(TypeError, match="ckpt_file_name"):
        save_checkpoint(_net(), 5)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        save_checkpoint(_net(), tmp_path / "missing" / "x.ckpt")
    assert not p.exists()
    save_checkpoint(_net(), p)
    with pytest.raises(ValueError, match="dec_mode"):
        load_checkpoint(p, dec_mode="AES-XTS")
    with pytest.raises(TypeError, match="filter_prefix"):
        load_checkpoint(p, filter_prefix=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="choice_func"):
        load_checkpoint(p, choice_func="0.")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "nope.ckpt")


# --------------------------------------------------------------------------- no pickle


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch PICKLE_RAN",))


def test_pickle_payload_is_never_unpickled(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.ckpt").write_bytes(pickle.dumps({"w": _Boom()}))
    with pytest.raises(CheckpointFormatError, match="not a safetensors checkpoint"):
        load_checkpoint(tmp_path / "evil.ckpt")
    torch.save({"w": torch.ones(2)}, tmp_path / "torch.ckpt")
    with pytest.raises(CheckpointFormatError):
        load_checkpoint(tmp_path / "torch.ckpt")
    (tmp_path / "tiny.ckpt").write_bytes(b"abc")
    with pytest.raises(CheckpointFormatError):
        load_checkpoint(tmp_path / "tiny.ckpt")
    assert not (tmp_path / "PICKLE_RAN").exists()


# --------------------------------------------------------------------------- async


def test_async_save_returns_before_writing_and_snapshots(tmp_path: Path, monkeypatch) -> None:
    gate, started = threading.Event(), threading.Event()
    real_write = ckpt_mod._write_file

    def slow_write(*args, **kwargs):
        started.set()
        assert gate.wait(20)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(ckpt_mod, "_write_file", slow_write)
    net = _net(1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    expected = {k: v.clone() for k, v in net.state_dict().items()}
    path = tmp_path / "async.ckpt"
    handle = save_checkpoint(net, path, async_save=True, optimizer=opt, append_dict={"e": 1})
    assert started.wait(10)
    assert not handle.done() and not path.exists()
    with torch.no_grad():  # in-place updates after the call must not reach the file
        for p in net.parameters():
            p.add_(100.0)
    gate.set()
    assert handle.wait(timeout=20) == str(path)
    wait_for_pending_saves(timeout=20)
    loaded = load_checkpoint(path)
    for k, v in expected.items():
        assert torch.equal(loaded[k], v), k


def test_async_saves_keep_order_and_report_errors(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "o.ckpt"
    handles = [
        save_checkpoint({"v": torch.full((1000,), float(i))}, path, async_save=True)
        for i in range(5)
    ]
    wait_for_pending_saves(timeout=20)
    assert all(h.done() for h in handles)
    assert torch.all(load_checkpoint(path)["v"] == 4.0)

    def failing_write(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(ckpt_mod, "_write_file", failing_write)
    handle = save_checkpoint(_net(), tmp_path / "fail.ckpt", async_save="thread")
    with pytest.raises(OSError, match="disk full"):
        handle.wait(timeout=20)
    with pytest.raises(OSError, match="disk full"):
        wait_for_pending_saves(timeout=20)
    wait_for_pending_saves(timeout=20)  # reported once, then cleared
    assert not (tmp_path / "fail.ckpt").exists()


def test_async_saves_run_one_at_a_time_on_one_worker(tmp_path: Path, monkeypatch) -> None:
    """One background worker: saves never overlap and start in call order, a failed one
    does not stop the next, and a pending save times out only its waiter."""
    gate = threading.Event()
    started: list[tuple[str, str]] = []
    running = threading.Semaphore(1)
    real_write = ckpt_mod._write_file

    def write(path, *args, **kwargs):
        assert running.acquire(blocking=False), "two saves ran at once"
        try:
            started.append((Path(path).name, threading.current_thread().name))
            assert gate.wait(20)
            if Path(path).name == "b.ckpt":
                raise OSError("disk full")
            return real_write(path, *args, **kwargs)
        finally:
            running.release()

    monkeypatch.setattr(ckpt_mod, "_write_file", write)
    handles = [
        save_checkpoint(_net(i), tmp_path / f"{name}.ckpt", async_save=True)
        for i, name in enumerate("abc")
    ]
    with pytest.raises(TimeoutError, match="not written within"):
        handles[0].wait(timeout=0.01)
    with pytest.raises(TimeoutError):
        wait_for_pending_saves(timeout=0.01)
    gate.set()
    with pytest.raises(OSError, match="disk full"):
        wait_for_pending_saves(timeout=20)
    assert [name for name, _ in started] == ["a.ckpt", "b.ckpt", "c.ckpt"]
    assert len({thread for _, thread in started}) == 1
    assert handles[2].wait(timeout=20) == str(tmp_path / "c.ckpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ckpt", "c.ckpt"]


def test_async_save_argument_is_one_contract(tmp_path: Path) -> None:
    """save_checkpoint and CheckpointConfig check ``async_save`` with the same rule."""
    from sumlens.train import CheckpointConfig

    for bad, error in (("fork", ValueError), (1, TypeError)):
        with pytest.raises(error) as direct:
            save_checkpoint(_net(), tmp_path / "x.ckpt", async_save=bad)
        with pytest.raises(error) as config:
            CheckpointConfig(async_save=bad)
        assert str(direct.value).replace("save_checkpoint", "CheckpointConfig") == str(config.value)


# --------------------------------------------------------------------------- crash safety

_CHILD = textwrap.dedent(
    """
    import sys, torch
    from sumlens.train import save_checkpoint
    big = {"w": torch.randn(24 * 1024 * 1024)}  # ~96 MB
    print("ready", flush=True)
    while True:
        big["w"][0] += 1
        save_checkpoint(big, sys.argv[1], enc_key=(b"k" * 16 if sys.argv[2] == "enc" else None))
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("enc", ["plain", "enc"])
def test_sigkill_mid_write_leaves_no_partial_file(
    tmp_path: Path, enc: str, caplog: pytest.LogCaptureFixture
) -> None:
    key = b"k" * 16 if enc == "enc" else None
    good = _net(1)
    save_checkpoint(good, tmp_path / "good.ckpt", enc_key=key)
    target = tmp_path / "big.ckpt"
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(target), enc],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        deadline = time.monotonic() + 30
        saw_complete = False
        killed_mid_write = False
        while time.monotonic() < deadline:
            saw_complete = saw_complete or target.exists()
            temps = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
            try:
                sizes = [p.stat().st_size for p in temps]
            except FileNotFoundError:
                continue
            # kill while a temp file is being filled, after at least one complete save
            if saw_complete and any(0 < s < 50 * 1024 * 1024 for s in sizes):
                proc.send_signal(signal.SIGKILL)
                killed_mid_write = True
                break
            time.sleep(0.0005)
        assert killed_mid_write, "never caught the child mid-write"
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers and all(p.name.startswith(".") for p in leftovers)
    finals = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".tmp"))
    assert finals == ["big.ckpt", "good.ckpt"]
    fresh = _net(2)
    load_checkpoint(tmp_path / "good.ckpt", net=fresh, dec_key=key)
    _assert_same_state(good, fresh)
    big = load_checkpoint(target, dec_key=key)  # the previous complete save
    assert big["w"].numel() == 24 * 1024 * 1024
    # the next save into the directory removes what the killed process left, and says so
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        save_checkpoint(_net(3), tmp_path / "next.ckpt", enc_key=key)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.ckpt", "good.ckpt", "next.ckpt"]
    assert all(p.name in caplog.text for p in leftovers)


_BLOCKED_WRITER = textwrap.dedent(
    """
    import sys
    from sumlens.train.atomic import atomic_write

    def write(f):
        f.write(b"x" * 1000)
        f.flush()
        print("writing", flush=True)
        sys.stdin.readline()
        f.write(b"y")

    atomic_write(sys.argv[1], write)
    print("done", flush=True)
    """
)


def _start_blocked_writer(path: Path) -> subprocess.Popen[bytes]:
    """A process inside ``atomic_write(path)``, its temp file half written, until told."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _BLOCKED_WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"writing"
    return proc


def _temps(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir() if p.name.endswith(".tmp")}


@pytest.mark.skipif(os.name != "posix", reason="stale temp files are found by POSIX pid")
def test_only_temp_files_of_dead_writers_are_removed(tmp_path: Path) -> None:
    live = _start_blocked_writer(tmp_path / "live.bin")
    dead = _start_blocked_writer(tmp_path / "dead.bin")
    gate, writing = threading.Event(), threading.Event()

    def blocked_write(f) -> None:
        f.write(b"t")
        writing.set()
        assert gate.wait(30)

    here = threading.Thread(
        target=atomic_write, args=(tmp_path / "thread.bin", blocked_write), daemon=True
    )
    try:
        here.start()
        assert writing.wait(30)
        dead.kill()
        dead.wait(timeout=10)
        before = _temps(tmp_path)
        assert len(before) == 3
        dead_temps = {n for n in before if n.startswith(".dead.bin.")}
        assert len(dead_temps) == 1
        save_checkpoint(_net(), tmp_path / "c.ckpt")  # while the other two still write
        assert _temps(tmp_path) == before - dead_temps
        assert live.stdin is not None and live.stdout is not None
        live.stdin.write(b"go\n")
        live.stdin.flush()
        assert live.stdout.readline().strip() == b"done"
        assert live.wait(timeout=10) == 0
        gate.set()
        here.join(timeout=30)
    finally:
        gate.set()
        for proc in (live, dead):
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    assert (tmp_path / "live.bin").read_bytes() == b"x" * 1000 + b"y"
    assert (tmp_path / "thread.bin").read_bytes() == b"t"
    assert not (tmp_path / "dead.bin").exists()
    assert not _temps(tmp_path)
