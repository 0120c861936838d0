"""``import sumlens.integrations.keras`` with no Keras backend chosen (issue 40, item 4): the
README promises no TensorFlow needed, so with ``KERAS_BACKEND`` unset, no ``keras.json``
naming another backend and TensorFlow absent, the torch backend is chosen and that is said
once; a user's choice (``KERAS_BACKEND``, or ``keras.json``) is kept, and one whose package
is missing fails in one line saying what to set.

Keras picks its backend when first imported, so each case runs in a fresh interpreter with
``KERAS_BACKEND`` and ``KERAS_HOME`` removed from its environment and ``HOME`` an empty
temporary directory (Keras reads ``~/.keras/keras.json``), fitting a tiny model with the
real Keras; the run is read back with TensorBoard's ``EventAccumulator``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("keras") is None:  # not imported here: that would pick a backend
    pytest.skip("keras is not installed (the keras extra)", allow_module_level=True)
if importlib.util.find_spec("tensorflow") is not None:
    pytest.skip("tensorflow is installed: Keras' own default applies", allow_module_level=True)

from helpers.summary import CHILD_TIMEOUT, child_code
from helpers.tensorboard import accumulator

FIT = """
    import json, sys
    import numpy as np
    from sumlens.integrations.keras import SumlensCallback
    import keras

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.ones((8, 3), dtype=np.float32)
    history = model.fit(
        x, x.sum(axis=1, keepdims=True), batch_size=4, epochs=2, verbose=0,
        callbacks=[SumlensCallback(sys.argv[1])],
    )
    print(json.dumps({"backend": keras.backend.backend(), "loss": history.history["loss"],
                      "tensorflow_imported": "tensorflow" in sys.modules}))
"""

BACKEND = """
    import json, sys
    import sumlens.integrations.keras
    import keras
    print(json.dumps({"backend": keras.backend.backend()}))
"""


def _child(body: str, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``body`` in a fresh interpreter with ``HOME`` at ``home`` and, besides ``env``, no
    Keras setting of this process."""
    clean = {k: v for k, v in os.environ.items() if k not in ("KERAS_BACKEND", "KERAS_HOME")}
    return subprocess.run(
        [sys.executable, "-c", child_code(body), *args],
        cwd=home,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
        env={**clean, "HOME": str(home), **env},
    )


def test_no_backend_chosen_fits_on_torch_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _child(FIT, home, str(tmp_path / "logs"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["backend"] == "torch"
    assert not report["tensorflow_imported"]
    said = [line for line in done.stderr.splitlines() if "no backend chosen" in line]
    assert len(said) == 1 and "using the torch backend" in said[0], done.stderr
    assert "set KERAS_BACKEND" in said[0]
    train = accumulator(tmp_path / "logs" / "train")
    assert [e.value for e in train.Scalars("epoch_loss")] == pytest.approx(report["loss"])


def test_keras_own_default_file_is_not_a_choice(tmp_path: Path) -> None:
    """Keras writes ``keras.json`` naming tensorflow on its first import, whatever the
    backend: such a file (with TensorFlow absent) still gets the torch backend."""
    (tmp_path / ".keras").mkdir()
    (tmp_path / ".keras" / "keras.json").write_text(json.dumps({"backend": "tensorflow"}))
    done = _child(BACKEND, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"backend": "torch"}
    assert "names Keras' default, tensorflow" in done.stderr


def test_a_users_choice_is_kept(tmp_path: Path) -> None:
    """``keras.json`` naming a backend, and ``KERAS_BACKEND`` overriding the file (here
    naming jax, which need not be installed then), as Keras itself reads them: kept, and
    nothing is said."""
    (tmp_path / ".keras").mkdir()
    config = tmp_path / ".keras" / "keras.json"
    config.write_text(json.dumps({"backend": "torch"}))
    from_file = _child(BACKEND, tmp_path)
    config.write_text(json.dumps({"backend": "jax"}))
    from_env = _child(BACKEND, tmp_path, KERAS_BACKEND="torch")
    for done in (from_file, from_env):
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.strip().splitlines()[-1]) == {"backend": "torch"}
        assert "no backend chosen" not in done.stderr


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            {"KERAS_BACKEND": "tensorflow"},
            "ImportError: Keras is set to the 'tensorflow' backend (by KERAS_BACKEND), but "
            "tensorflow is not installed: install it, or set KERAS_BACKEND=torch",
        ),
        (
            {"keras.json": "jax"},
            "ImportError: Keras is set to the 'jax' backend (by {home}/.keras/keras.json), but "
            "jax is not installed: install it, or set KERAS_BACKEND=torch",
        ),
    ],
)
def test_a_chosen_backend_not_installed_fails_in_one_line(
    tmp_path: Path, setting: dict[str, str], message: str
) -> None:
    if importlib.util.find_spec("jax") is not None and "keras.json" in setting:
        pytest.skip("jax is installed here")
    env = {k: v for k, v in setting.items() if k != "keras.json"}
    if "keras.json" in setting:
        (tmp_path / ".keras").mkdir()
        (tmp_path / ".keras" / "keras.json").write_text(
            json.dumps({"backend": setting["keras.json"]})
        )
    done = _child(BACKEND, tmp_path, **env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(message.format(home=tmp_path))
    assert "No module named" not in done.stderr
