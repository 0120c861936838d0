"""Loss-scale managers: ``FixedLossScaleManager`` and ``DynamicLossScaleManager``.

Low-precision (float16) gradients underflow; multiplying the loss by a scale before
``backward()`` and dividing the gradients by it afterwards keeps them representable. The
managers hold the scale and the policy; :class:`sumlens.Model` applies them in its
training step:

1. ``(loss * scale).backward()``;
2. gradients are unscaled in place and checked for inf/NaN (one fused op per device);
3. the optimizer step is skipped when the gradients overflowed and
   ``get_drop_overflow_update()`` is true;
4. ``update_loss_scale(overflow)`` adjusts the scale (dynamic manager only).

Step 3 needs the overflow flag on the host, so a loss-scaled step synchronises the device
once (``torch.cuda.amp.GradScaler`` does the same). ``FixedLossScaleManager(...,
drop_overflow_update=False)`` never reads the flag and never synchronises.

Both managers have ``state_dict()``/``load_state_dict()`` so a resumed run can continue
with the same scale.
"""

from __future__ import annotations

from typing import Any

from sumlens._checks import check_bool, check_int, check_number

__all__ = ["DynamicLossScaleManager", "FixedLossScaleManager", "LossScaleManager"]


class LossScaleManager:
    """Base class: ``get_loss_scale()``, ``update_loss_scale(overflow)``,
    ``get_drop_overflow_update()``."""

    def get_loss_scale(self) -> float:
        """The current loss scale."""
        raise NotImplementedError

    def update_loss_scale(self, overflow: bool) -> None:
        """Adjust the scale after a step; ``overflow`` says whether gradients were inf/NaN."""
        raise NotImplementedError

    def get_drop_overflow_update(self) -> bool:
        """Whether the optimizer step is skipped when the gradients overflowed."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """The manager's state (to save with a checkpoint)."""
        raise NotImplementedError

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        raise NotImplementedError


class FixedLossScaleManager(LossScaleManager):
    """A constant scale (``loss_scale >= 1``, default 128).

    ``drop_overflow_update=True`` (default, as MindSpore) skips the optimizer step when
    the gradients overflowed; ``False`` always steps and never synchronises the device.
    """

    def __init__(self, loss_scale: float = 128.0, drop_overflow_update: bool = True) -> None:
        owner = "FixedLossScaleManager"
        self._loss_scale = check_number(loss_scale, "loss_scale", owner, 1)
        self._drop_overflow_update = check_bool(drop_overflow_update, "drop_overflow_update", owner)

    def get_loss_scale(self) -> float:
        return self._loss_scale

    def update_loss_scale(self, overflow: bool) -> None:
        """The scale is fixed: nothing to do."""

    def get_drop_overflow_update(self) -> bool:
        return self._drop_overflow_update

    def state_dict(self) -> dict[str, Any]:
        return {"loss_scale": self._loss_scale}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._loss_scale = float(state["loss_scale"])

    def __repr__(self) -> str:
        return (
            f"FixedLossScaleManager(loss_scale={self._loss_scale:g}, "
            f"drop_overflow_update={self._drop_overflow_update})"
        )


class DynamicLossScaleManager(LossScaleManager):
    """A scale that adapts: divided by ``scale_factor`` (not below 1) on every overflow,
    multiplied by it after ``scale_window`` consecutive steps without one.

    Defaults as MindSpore: ``init_loss_scale=2**24, scale_factor=2, scale_window=2000``.
    Overflowed steps are always dropped.
    """

    def __init__(
        self, init_loss_scale: float = 2.0**24, scale_factor: float = 2, scale_window: int = 2000
    ) -> None:
        owner = "DynamicLossScaleManager"
        self._loss_scale = check_number(init_loss_scale, "init_loss_scale", owner, 1)
        self._scale_factor = check_number(scale_factor, "scale_factor", owner, above=1)
        self._scale_window = check_int(scale_window, "scale_window", owner, 1)
        self._good_steps = 0

    def get_loss_scale(self) -> float:
        return self._loss_scale

    def update_loss_scale(self, overflow: bool) -> None:
        if overflow:
            self._loss_scale = max(self._loss_scale / self._scale_factor, 1.0)
            self._good_steps = 0
            return
        self._good_steps += 1
        if self._good_steps >= self._scale_window:
            self._loss_scale *= self._scale_factor
            self._good_steps = 0

    def get_drop_overflow_update(self) -> bool:
        return True

    def state_dict(self) -> dict[str, Any]:
        return {"loss_scale": self._loss_scale, "good_steps": self._good_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._loss_scale = float(state["loss_scale"])
        self._good_steps = int(state.get("good_steps", 0))

    def __repr__(self) -> str:
        return (
            f"DynamicLossScaleManager(loss_scale={self._loss_scale:g}, "
            f"scale_factor={self._scale_factor:g}, scale_window={self._scale_window})"
        )
