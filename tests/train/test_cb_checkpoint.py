"""CheckpointConfig and ModelCheckpoint: policy, names, retention, content, async, ranks."""

from __future__ import annotations

import os
import socket
import stat
import threading

import pytest
import torch
from helpers.callback_driver import drive
from helpers.file_modes import umask

from sumlens.train import checkpoint as ckpt_mod
from sumlens.train import load_checkpoint
from sumlens.train.callbacks import CheckpointConfig, ModelCheckpoint, _common


class FakeClock:
    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def ckpts(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith(".ckpt"))


# ------------------------------------------------------------------ CheckpointConfig


def test_config_policy_precedence():
    assert CheckpointConfig(keep_checkpoint_max=0).get_checkpoint_policy() == {
        "save_checkpoint_steps": 1,
        "save_checkpoint_seconds": None,
        "keep_checkpoint_max": 1,
        "keep_checkpoint_per_n_minutes": 0,
        "saved_network": None,
    }
    cfg = CheckpointConfig(5, 10, 3, 2)
    assert (cfg.save_checkpoint_seconds, cfg.keep_checkpoint_per_n_minutes) == (None, None)
    cfg = CheckpointConfig(save_checkpoint_steps=0, save_checkpoint_seconds=10)
    assert (cfg.save_checkpoint_steps, cfg.save_checkpoint_seconds) == (0, 10)
    cfg = CheckpointConfig(keep_checkpoint_max=None, keep_checkpoint_per_n_minutes=2)
    assert (cfg.keep_checkpoint_max, cfg.keep_checkpoint_per_n_minutes) == (None, 2)


def test_config_append_info_and_properties():
    tensor = torch.ones(2)
    cfg = CheckpointConfig(append_info=["epoch_num", {"lr": 0.5, "t": tensor}, "step_num"])
    assert cfg.append_dict == {"epoch_num": 0, "step_num": 0, "lr": 0.5, "t": tensor}
    assert CheckpointConfig(append_info=[]).append_dict is None
    cfg = CheckpointConfig(async_save="thread", enc_key=b"k" * 16, enc_mode="AES-CBC")
    assert (cfg.async_save, cfg.enc_key, cfg.enc_mode) == ("thread", b"k" * 16, "AES-CBC")
    assert CheckpointConfig(format="safetensors").format == "safetensors"
    with pytest.warns(UserWarning, match="thread"):
        assert CheckpointConfig(async_save="process").async_save == "thread"


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"save_checkpoint_steps": -1}, ValueError, "save_checkpoint_steps"),
        ({"save_checkpoint_seconds": 1.5}, TypeError, "save_checkpoint_seconds"),
        ({"keep_checkpoint_max": True}, TypeError, "keep_checkpoint_max"),
        ({"keep_checkpoint_per_n_minutes": -2}, ValueError, "keep_checkpoint_per_n_minutes"),
        (
            {
                "save_checkpoint_steps": 0,
                "save_checkpoint_seconds": None,
                "keep_checkpoint_max": 0,
                "keep_checkpoint_per_n_minutes": 0,
            },
            ValueError,
            "all None or 0",
        ),
        ({"saved_network": "net"}, TypeError, "saved_network"),
        ({"integrated_save": 1}, TypeError, "integrated_save"),
        ({"exception_save": "yes"}, TypeError, "exception_save"),
        ({"async_save": "fork"}, ValueError, "async_save"),
        ({"async_save": 1}, TypeError, "async_save"),
        ({"enc_key": "0123456789abcdef"}, (TypeError, ValueError), "enc_key"),
        ({"enc_key": b"short"}, ValueError, "enc_key"),
        ({"enc_mode": "SM4-CBC"}, ValueError, "enc_mode"),
        ({"enc_mode": 3}, TypeError, "enc_mode"),
        ({"append_info": "epoch_num"}, TypeError, "append_info"),
        ({"append_info": ["epoch"]}, ValueError, "append_info"),
        ({"append_info": [{"a": 1}, {"b": 2}]}, TypeError, "only one dict"),
        ({"append_info": [{1: 1}]}, TypeError, "keys"),
        ({"append_info": [{"a": [1]}]}, TypeError, "append_info"),
        ({"append_info": [3]}, TypeError, "append_info"),
        ({"format": "pt"}, ValueError, "format"),
        ({"crc_check": None}, TypeError, "crc_check"),
        ({"remove_redundancy": 0}, TypeError, "remove_redundancy"),
        ({"save_on_all_ranks": 1}, TypeError, "save_on_all_ranks"),
    ],
)
def test_config_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        CheckpointConfig(**kwargs)


# ------------------------------------------------------------------ construction


def test_model_checkpoint_argument_errors(tmp_path):
    for prefix in ("a/b", 3, ""):
        with pytest.raises(ValueError, match="prefix"):
            ModelCheckpoint(prefix, str(tmp_path))
    with pytest.raises(TypeError, match="config"):
        ModelCheckpoint("p", str(tmp_path), config={"save_checkpoint_steps": 1})
    with pytest.raises(TypeError, match="directory"):
        ModelCheckpoint("p", 5)
    with pytest.raises(ValueError, match="directory"):
        ModelCheckpoint("p", "  ")
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(NotADirectoryError):
        ModelCheckpoint("p", str(afile))


def test_directory_is_created_and_names_collide_across_runs(tmp_path):
    directory = tmp_path / "new" / "dir"
    with umask(0o022):
        for _ in range(3):
            drive([ModelCheckpoint("net", str(directory))], epochs=1, steps=1)
    assert ckpts(directory) == ["net-1_1.ckpt", "net_1-1_1.ckpt", "net_2-1_1.ckpt"]
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o755  # the umask's, as os.makedirs
    # the checkpoint rule: 0400 whatever the umask
    assert {stat.S_IMODE(os.stat(directory / n).st_mode) for n in ckpts(directory)} == {0o400}
    other = tmp_path / "other"
    other.mkdir()
    (other / "network-1_1.ckpt").write_bytes(b"")
    (other / "net-1_1_breakpoint.ckpt").write_bytes(b"")
    assert ModelCheckpoint("net", str(other)).prefix == "net"


def test_callable_prefix_and_directory(tmp_path):
    def prefix(params):
        return f"e{params.cur_epoch_num}s{params.cur_step_num}"

    def directory(params):
        return str(tmp_path / f"epoch{params.cur_epoch_num}")

    config = CheckpointConfig(save_checkpoint_steps=2)
    drive([ModelCheckpoint(prefix, directory, config)], epochs=2, steps=2)
    assert ckpts(tmp_path / "epoch1") == ["e1s2.ckpt"]
    assert ckpts(tmp_path / "epoch2") == ["e2s4.ckpt"]
    with pytest.raises(ValueError, match="callable prefix"):
        drive([ModelCheckpoint(lambda p: "a/b", str(tmp_path))], epochs=1, steps=1)


# ------------------------------------------------------------------ names and retention


def test_keep_max_names_and_pruning_over_epochs(tmp_path):
    seen = {}
    callback = ModelCheckpoint(
        "net", str(tmp_path), CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=3)
    )

    def record(params):
        seen[params.cur_step_num] = ckpts(tmp_path)

    drive([callback], epochs=3, steps=5, on_step=record)
    # the listing at step k is taken before step k's own save
    assert seen[4] == ["net-1_3.ckpt"]
    assert seen[10] == ["net-1_3.ckpt", "net-2_1.ckpt", "net-2_4.ckpt"]
    assert seen[13] == ["net-2_1.ckpt", "net-2_4.ckpt", "net-3_2.ckpt"]
    assert ckpts(tmp_path) == ["net-2_4.ckpt", "net-3_2.ckpt", "net-3_5.ckpt"]
    assert callback.latest_ckpt_file_name == str(tmp_path / "net-3_5.ckpt")
    mode = os.stat(callback.latest_ckpt_file_name).st_mode
    assert stat.S_IMODE(mode) == 0o400


def test_default_config_and_forced_final_save(tmp_path):
    drive([ModelCheckpoint("p", str(tmp_path))], epochs=2, steps=3)
    assert ckpts(tmp_path) == ["p-1_2.ckpt", "p-1_3.ckpt", "p-2_1.ckpt", "p-2_2.ckpt", "p-2_3.ckpt"]
    q_dir = tmp_path / "q"
    params, _ = drive(
        [ModelCheckpoint("q", str(q_dir), CheckpointConfig(save_checkpoint_steps=4))],
        epochs=2,
        steps=3,
    )
    assert ckpts(q_dir) == ["q-2_1.ckpt", "q-2_3.ckpt"]
    assert params.latest_ckpt_file == str(q_dir / "q-2_3.ckpt")
    assert params.last_save_ckpt_step == 6


def test_keep_max_deletes_until_within_limit_and_ignores_others(tmp_path):
    for age, name in enumerate(("k-0_3.ckpt", "k-0_2.ckpt", "k-0_1.ckpt")):
        (tmp_path / name).write_bytes(b"old")
        os.chmod(tmp_path / name, 0o400)
        stamp = 1_000_000 - 100 * age  # k-0_1 oldest, k-0_3 newest
        os.utime(tmp_path / name, (stamp, stamp))
    (tmp_path / "k-0_1_breakpoint.ckpt").write_bytes(b"")
    (tmp_path / "kk-1_1.ckpt").write_bytes(b"")
    (tmp_path / "k-0_9.safetensors").write_bytes(b"")
    assert ModelCheckpoint("k", str(tmp_path)).prefix == "k_1"  # collision rule
    # a callable directory skips the collision rule: the foreign k-* files get pruned
    config = CheckpointConfig(keep_checkpoint_max=2)
    drive([ModelCheckpoint("k", lambda params: str(tmp_path), config)], epochs=1, steps=1)
    assert ckpts(tmp_path) == ["k-0_1_breakpoint.ckpt", "k-0_3.ckpt", "k-1_1.ckpt", "kk-1_1.ckpt"]


def test_keep_per_n_minutes_with_injected_clock(tmp_path):
    clock = FakeClock(100.0)
    config = CheckpointConfig(keep_checkpoint_max=0, keep_checkpoint_per_n_minutes=1)
    callback = ModelCheckpoint("m", str(tmp_path), config, clock=clock)
    seen = {}

    def tick(params):
        seen[params.cur_step_num] = ckpts(tmp_path)
        clock.now += 25.0

    drive([callback], epochs=2, steps=4, on_step=tick)
    assert seen[4] == ["m-1_1.ckpt", "m-1_3.ckpt"]
    assert seen[7] == ["m-1_1.ckpt", "m-1_3.ckpt", "m-2_1.ckpt", "m-2_2.ckpt"]
    assert ckpts(tmp_path) == ["m-1_1.ckpt", "m-1_3.ckpt", "m-2_1.ckpt", "m-2_3.ckpt", "m-2_4.ckpt"]


def test_keep_per_n_minutes_keeps_all_when_saves_are_far_apart(tmp_path):
    clock = FakeClock()
    config = CheckpointConfig(keep_checkpoint_max=0, keep_checkpoint_per_n_minutes=1)
    callback = ModelCheckpoint("m", str(tmp_path), config, clock=clock)

    def tick(params):
        clock.now += 61.0

    drive([callback], epochs=1, steps=4, on_step=tick)
    assert len(ckpts(tmp_path)) == 4


def test_seconds_trigger_with_injected_clock(tmp_path):
    clock = FakeClock()
    config = CheckpointConfig(
        save_checkpoint_steps=0, save_checkpoint_seconds=10, keep_checkpoint_max=10
    )
    callback = ModelCheckpoint("s", str(tmp_path), config, clock=clock)

    def tick(params):
        clock.now += 5.0  # 10 s after a save is not "more than 10 s"

    drive([callback], epochs=2, steps=4, on_step=tick)
    assert ckpts(tmp_path) == ["s-1_3.ckpt", "s-2_2.ckpt", "s-2_4.ckpt"]


def test_pruning_never_deletes_the_newest_good_file(tmp_path, monkeypatch):
    real = ckpt_mod._save_now
    calls = []

    def flaky(path, *args):
        calls.append(path)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(path, *args)

    monkeypatch.setattr(ckpt_mod, "_save_now", flaky)
    callback = ModelCheckpoint("g", str(tmp_path), CheckpointConfig(keep_checkpoint_max=1))
    with pytest.raises(OSError, match="disk full"):
        drive([callback], epochs=1, steps=4)
    assert ckpts(tmp_path) == ["g-1_2.ckpt"]
    assert load_checkpoint(str(tmp_path / "g-1_2.ckpt"))["weight"].shape == (1, 2)


# ------------------------------------------------------------------ content


def test_round_trip_weights_optimizer_and_append_info(tmp_path):
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    tag = torch.arange(3.0)
    config = CheckpointConfig(
        save_checkpoint_steps=3,
        append_info=["epoch_num", "step_num", {"lr": 0.01, "name": "run", "tag": tag}],
    )
    callback = ModelCheckpoint("rt", str(tmp_path), config)
    drive([callback], epochs=2, steps=4, net=net, opt=opt)
    assert callback.latest_ckpt_file_name.endswith("rt-2_4.ckpt")

    fresh = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.5)
    data = load_checkpoint(callback.latest_ckpt_file_name, fresh, optimizer=fresh_opt)
    for a, b in zip(net.state_dict().values(), fresh.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    saved, loaded = opt.state_dict(), fresh_opt.state_dict()
    assert loaded["param_groups"][0]["lr"] == 0.01
    for index, state in saved["state"].items():
        assert torch.equal(state["exp_avg"], loaded["state"][index]["exp_avg"])
        assert int(state["step"]) == int(loaded["state"][index]["step"]) == 8
    assert (data["epoch_num"], data["step_num"], data["lr"], data["name"]) == (2, 8, 0.01, "run")
    assert torch.equal(data["tag"], tag)
    earlier = load_checkpoint(str(tmp_path / "rt-2_2.ckpt"))
    assert (earlier["epoch_num"], earlier["step_num"]) == (2, 6)


def test_saved_network_and_encryption(tmp_path):
    other = torch.nn.Linear(5, 5)
    key = b"0123456789abcdef0123456789abcdef"
    config = CheckpointConfig(saved_network=other, enc_key=key, enc_mode="AES-CBC")
    callback = ModelCheckpoint("enc", str(tmp_path), config)
    drive([callback], epochs=1, steps=1)
    with pytest.raises(ValueError):
        load_checkpoint(callback.latest_ckpt_file_name)
    data = load_checkpoint(callback.latest_ckpt_file_name, dec_key=key, dec_mode="AES-CBC")
    assert sorted(data) == ["bias", "weight"]
    assert torch.equal(data["weight"], other.weight.detach())


def test_exception_save_writes_breakpoint_and_reraises(tmp_path):
    def boom(params):
        if params.cur_step_num == 5:
            raise RuntimeError("boom")

    config = CheckpointConfig(exception_save=True, append_info=["step_num"])
    for _ in range(2):
        with pytest.raises(RuntimeError, match="boom"):
            drive([ModelCheckpoint("e", str(tmp_path), config)], epochs=3, steps=4, on_step=boom)
    names = ckpts(tmp_path)
    assert "e-2_1_breakpoint.ckpt" in names and "e_1-2_1_breakpoint.ckpt" in names
    assert load_checkpoint(str(tmp_path / "e-2_1_breakpoint.ckpt"))["step_num"] == 5


# ------------------------------------------------------------------ async and ranks


def test_async_save_does_not_block_the_step(tmp_path, monkeypatch):
    release = threading.Event()
    real = ckpt_mod._save_now

    def slow(*args):
        assert release.wait(timeout=20), "test never released the writer"
        return real(*args)

    monkeypatch.setattr(ckpt_mod, "_save_now", slow)
    config = CheckpointConfig(save_checkpoint_steps=2, async_save=True)
    callback = ModelCheckpoint("a", str(tmp_path), config)
    seen = []

    def check(params):
        if params.cur_step_num == 3:
            # step 2's save was handed off; the loop went on while the writer is blocked
            seen.append(ckpts(tmp_path))
            release.set()

    drive([callback], epochs=1, steps=3, on_step=check)
    assert seen == [[]]
    assert ckpts(tmp_path) == ["a-1_2.ckpt", "a-1_3.ckpt"]


def test_only_rank_zero_saves_unless_told(tmp_path, monkeypatch):
    monkeypatch.setattr(_common, "rank_and_world", lambda: (1, 2))
    drive([ModelCheckpoint("r", str(tmp_path / "a"))], epochs=1, steps=2)
    assert ckpts(tmp_path / "a") == []
    config = CheckpointConfig(save_on_all_ranks=True)
    drive([ModelCheckpoint("r", str(tmp_path / "b"), config)], epochs=1, steps=2)
    assert ckpts(tmp_path / "b") == ["r-1_1.ckpt", "r-1_2.ckpt"]


def test_gloo_group_of_one_saves(tmp_path):
    dist = torch.distributed
    if not dist.is_available():
        pytest.skip("torch.distributed not available")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        assert _common.rank_and_world() == (0, 1)
        drive([ModelCheckpoint("d", str(tmp_path))], epochs=1, steps=2)
    finally:
        dist.destroy_process_group()
    assert ckpts(tmp_path) == ["d-1_1.ckpt", "d-1_2.ckpt"]
