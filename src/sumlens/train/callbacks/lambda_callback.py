"""``LambdaCallback``: a callback made of plain functions (experimental).

Both hook spellings are accepted: the ``on_train_*``/``on_eval_*`` keywords of MindSpore
2.10, and the old ``begin``/``epoch_begin``/``step_begin``/``step_end``/``epoch_end``/
``end`` of older MindSpore documentation (MindSpore 2.10 rejects those), which register
the function for training *and* evaluation, like old-style methods. Giving an old keyword
and a new one for the same hook is ambiguous and a ValueError.
"""

from __future__ import annotations

from collections.abc import Callable

from sumlens.train.callback import NEW_STYLE_HOOKS, OLD_STYLE_HOOKS, Callback, RunContext

__all__ = ["LambdaCallback"]

Hook = Callable[[RunContext], object] | None


class LambdaCallback(Callback):
    """Call the given function (``f(run_context)``) at each named hook; others do nothing.

    ``fit``'s evaluation does not call it, as MindSpore's; set ``runs_in_fit_eval = True``
    on the instance (or a subclass) to have its ``on_eval_*`` functions called there too.
    """

    runs_in_fit_eval = False

    def __init__(
        self,
        on_train_epoch_begin: Hook = None,
        on_train_epoch_end: Hook = None,
        on_train_step_begin: Hook = None,
        on_train_step_end: Hook = None,
        on_train_begin: Hook = None,
        on_train_end: Hook = None,
        on_eval_epoch_begin: Hook = None,
        on_eval_epoch_end: Hook = None,
        on_eval_step_begin: Hook = None,
        on_eval_step_end: Hook = None,
        on_eval_begin: Hook = None,
        on_eval_end: Hook = None,
        *,
        begin: Hook = None,
        epoch_begin: Hook = None,
        step_begin: Hook = None,
        step_end: Hook = None,
        epoch_end: Hook = None,
        end: Hook = None,
    ) -> None:
        given = dict(locals())
        functions: dict[str, Callable[[RunContext], object]] = {}
        for name in NEW_STYLE_HOOKS + OLD_STYLE_HOOKS:
            function = given[name]
            if function is not None and not callable(function):
                raise TypeError(
                    f"{name} must be a callable taking run_context, or None, got {function!r}"
                )
        for name in NEW_STYLE_HOOKS:
            if given[name] is not None:
                functions[name] = given[name]
        for old in OLD_STYLE_HOOKS:
            function = given[old]
            if function is None:
                continue
            for phase in ("train", "eval"):
                new = f"on_{phase}_{old}"
                if new in functions:
                    raise ValueError(
                        f"LambdaCallback got both {old}= and {new}=; {old} already covers "
                        f"{new}, give only one of them"
                    )
                functions[new] = function
        self._functions = functions
        for name, function in functions.items():
            setattr(self, name, self._bind(function))

    @staticmethod
    def _bind(function: Callable[[RunContext], object]) -> Callable[[RunContext], None]:
        def hook(run_context: RunContext) -> None:
            function(run_context)

        return hook
