"""Every place where render gating relies on torchrl beyond its documented API.

The design, in full: the render gating guide's *Design* section.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torchrl
from torchrl.envs import Compose, GymWrapper, SerialEnv, TransformedEnv
from torchrl.record import VideoRecorder

from docsaccel.contract import fork_safe_lock

try:
    from torchrl.envs import MujocoEnv
except ImportError:  # a torchrl without its own MuJoCo envs: gymnasium gating still works
    MujocoEnv = None

__all__ = [
    "CHECKED_TORCHRL",
    "INV_CALL",
    "NATIVE_BACKENDS",
    "RENDER_PIXELS",
    "check_native_env",
    "check_torchrl_version",
    "gym_wrapper_env",
    "is_native_env",
    "last_pixels",
    "overriding_subclass",
    "recorder_copies",
    "recorder_skip_as_given",
    "serial_workers",
]

#: The torchrl release series whose private names this module was checked against.
CHECKED_TORCHRL = "0.14"

#: The ``MujocoEnv`` backends whose rendering was checked to be gated exactly. The others
#: render differently (``"mujoco-torch"`` ray-casts in torch, ``"mjx"`` copies state back
#: from JAX first) and were not checked.
NATIVE_BACKENDS: tuple[str, ...] = ("mujoco",)

#: The ``MujocoEnv`` method that renders the pixel observation of a reset or a step; a
#: gated env overrides it.
RENDER_PIXELS = "_render_pixels"

_LAST_PIXELS = "_last_pixels"

_subclasses: dict[tuple[type, str], type] = {}
_subclasses_lock = fork_safe_lock()


def overriding_subclass(cls: type, method: str, wrap: Callable[[Any], Any]) -> type:
    """``cls`` with ``method`` replaced by ``wrap(original)``: one subclass per class and method.

    The subclass keeps the name, module and docstring of ``cls`` and is built with its own
    metaclass, as a subclass would be. An instance is switched to it by assigning its
    ``__class__``: torchrl's classes are never patched, and only that instance changes.
    """
    with _subclasses_lock:
        found = _subclasses.get((cls, method))
        if found is None:
            namespace = {
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                "__doc__": cls.__doc__,
                method: wrap(getattr(cls, method)),
            }
            found = _subclasses[(cls, method)] = type(cls)(cls.__name__, (cls,), namespace)
        return found


#: The ``Transform`` method every step runs through (``TransformedEnv._step`` calls
#: ``transform.inv``, and ``Compose`` calls each transform's ``_inv_call``) before the
#: env steps.
INV_CALL = "_inv_call"

_CACHED_PARENT = "_parent"


def check_torchrl_version(version: str | None = None) -> str:
    """Return the installed torchrl version; raise RuntimeError if it is not the checked series."""
    version = torchrl.__version__ if version is None else version
    series = ".".join(str(version).split("+")[0].split(".")[:2])
    if series != CHECKED_TORCHRL:
        raise RuntimeError(
            f"render gating of torchrl's MujocoEnv was checked against torchrl "
            f"{CHECKED_TORCHRL}.x, but torchrl {version} is installed: its private render "
            "path may differ, and a gate built on it could keep wrong frames. Use torchrl "
            f"{CHECKED_TORCHRL}.x, or gate a gymnasium env with RenderEvery instead."
        )
    return str(version)


def is_native_env(env: Any) -> bool:
    """Whether ``env`` is one of torchrl's own MuJoCo envs (a ``MujocoEnv`` instance)."""
    return MujocoEnv is not None and isinstance(env, MujocoEnv)


def check_native_env(env: Any) -> None:
    """Raise if ``env`` is not a ``MujocoEnv`` this module knows how to gate exactly.

    It must run on a checked torchrl version and backend, produce pixels
    (``from_pixels=True``), leave the cadence to docsaccel (``render_every=1``), and still
    have the private render path read here.
    """
    if not is_native_env(env):
        raise TypeError(f"expected a torchrl MujocoEnv, got {type(env).__name__}: {env!r}")
    check_torchrl_version()
    name = type(env).__name__
    backend = getattr(env, "backend_name", None)
    if backend not in NATIVE_BACKENDS:
        raise ValueError(
            f"{name}(backend={backend!r}): render gating supports the backends "
            f"{NATIVE_BACKENDS} only; create the env with backend='mujoco'"
        )
    if not env.from_pixels:
        raise ValueError(
            f"{name} was created with from_pixels=False: it renders no frames to gate. "
            f"Create it with {name}(backend='mujoco', from_pixels=True)."
        )
    if env.render_every != 1:
        raise ValueError(
            f"{name} was created with render_every={env.render_every}: docsaccel decides "
            "which frames are rendered, from the recorder's own counter; create the env "
            "with render_every=1 (the default)"
        )
    if not callable(getattr(env, RENDER_PIXELS, None)) or not hasattr(env, _LAST_PIXELS):
        raise RuntimeError(
            f"{name} has no {RENDER_PIXELS}() or {_LAST_PIXELS}: this torchrl's MujocoEnv "
            f"renders differently from torchrl {CHECKED_TORCHRL}.x, which render gating "
            "was checked against"
        )


def last_pixels(env: Any) -> Any:
    """The env's last pixel observation, or ``None`` when its next frame must be fresh.

    ``MujocoEnv._reset`` sets it to ``None`` (full and partial resets alike), and
    ``_render_pixels`` stores each frame it renders.
    """
    return getattr(env, _LAST_PIXELS)


def recorder_skip_as_given(recorder: Any) -> int | None:
    """A ``VideoRecorder``'s ``skip`` as given, ``None`` while torchrl's default is unresolved.

    Reading the public ``skip`` would resolve (and fix) the default from the recorder's
    parent env, which may not be attached yet.
    """
    return getattr(recorder, "_skip", None)


def gym_wrapper_env(env: Any) -> Any:
    """The gymnasium env inside a torchrl ``GymWrapper``, ``None`` for anything else."""
    return env._env if isinstance(env, GymWrapper) else None


def serial_workers(env: Any) -> list[Any]:
    """The sub-envs of an in-process ``SerialEnv`` (started if still lazy); ``[]`` otherwise."""
    if not isinstance(env, SerialEnv):
        return []
    if env.is_closed:
        env.start()  # a SerialEnv creates its sub-envs lazily
    return list(env._envs)


def _transforms(transform: Any) -> Iterator[Any]:
    """``transform`` and, for a ``Compose``, every transform inside it, depth first."""
    yield transform
    if isinstance(transform, Compose):
        for inner in transform.transforms:
            yield from _transforms(inner)


def recorder_copies(recorder: Any) -> list[Any]:
    """The ``VideoRecorder`` copies in parent envs torchrl cached beside ``recorder``.

    ``Transform.parent`` builds, once, an env of copies of the transforms before the one
    asking; a macro action steps the env through it. Only parents already built are
    searched; ``[]`` when the recorder is in no env yet.
    """
    try:
        container = recorder.container
    except AttributeError:  # never attached to an env
        return []
    if not isinstance(container, TransformedEnv):
        return []
    copies = []
    for transform in _transforms(container.transform):
        parent = transform.__dict__.get(_CACHED_PARENT)
        if not isinstance(parent, TransformedEnv):
            continue
        for inner in _transforms(parent.transform):
            if isinstance(inner, VideoRecorder) and inner is not recorder:
                copies.append(inner)
    return copies
