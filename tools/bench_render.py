"""Benchmark render gating: gated vs ungated MuJoCo rollouts, measured side by side.

docsaccel side: gymnasium HalfCheetah-v5 at 480x360, 2 episodes x 1000 steps, a consumer
that needs a frame every step (as torchrl's ``GymWrapper(from_pixels=True)`` does) and a
video that keeps one frame in 16. Ungated and gated episodes alternate, so machine noise
hits both sides alike. The ideal speedup divides the ungated time by the floor of the
gated side, all measured in this same run: ``physics + fresh_needed * render``, where
``physics`` is the episodes' resets and steps run without rendering (a third, alternating
side), ``render`` the cheaper of the two sides' mean fresh render, and ``fresh_needed``
the kept frames plus the episodes' first frames.

torchrl-native side: torchrl's own ``SatelliteEnv(backend="mujoco", from_pixels=True)``
at the same size under ``VideoRecorder(skip=16)``, 2 episodes x 400 steps stepped one by
one (a frame consumed at every step), four sides alternating episode by episode on the
same reset noise and actions: ungated (``render_every=1``), torchrl's own
``render_every=16``, docsaccel-gated (``bind_recorder``), and a floor side: torchrl's
``render_every`` set beyond the episode, so the same stack (recorder, pixel
observations) renders only the episodes' first frames. The ideal divides the ungated time
by ``floor + (fresh_needed - episodes) * render``: the same data flow plus the kept
frames' renders. ``native_identical_fraction`` is the share of kept frames equal to the
ungated side's; torchrl's own ``render_every`` is reported beside (``native_torchrl_*``,
and today's ``torchrl_speedup`` / ``torchrl_identical_fraction``).

The last output line is one JSON object: speedup, ideal, efficiency (= speedup / ideal),
identical_fraction, their ``native_`` counterparts, torchrl_speedup,
torchrl_identical_fraction, and the measurements.

Usage::

    python tools/bench_render.py                     # full size (~5 minutes)
    python tools/bench_render.py --steps 100 --torchrl-steps 48 --width 96 --height 72
"""

from __future__ import annotations

import argparse
import json
import time

from docsaccel.headless import ensure_headless_gl

ensure_headless_gl()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

from docsaccel.render import RenderEvery  # noqa: E402

ENV_ID = "HalfCheetah-v5"
SEED = 0


def run_episode(env, actions, seed, every, timings):
    """One episode with a frame consumed every step; return the frames a skip-``every`` video keeps.

    Stream positions count across episodes, as torchrl's ``VideoRecorder`` counts. Adds
    the wall time, the time inside ``render()``, the frames, steps and the positions that
    had to be fresh (kept or first of an episode) to ``timings``.
    """
    kept = []
    render_seconds = 0.0
    started = time.perf_counter()
    env.reset(seed=seed)
    for step in range(len(actions) + 1):
        if step:
            env.step(actions[step - 1])
        before = time.perf_counter()
        frame = env.render()
        render_seconds += time.perf_counter() - before
        timings["frames"] += 1
        if timings["frames"] % every == 0:
            kept.append(frame)
        if timings["frames"] % every == 0 or step == 0:
            timings["fresh_needed"] += 1
    timings["wall"] += time.perf_counter() - started
    timings["render"] += render_seconds
    timings["steps"] += len(actions)
    return kept


def run_physics(env, actions, seed):
    """Wall time of the episode's reset and steps alone, nothing rendered."""
    started = time.perf_counter()
    env.reset(seed=seed)
    for action in actions:
        env.step(action)
    return time.perf_counter() - started


def make_env(width, height):
    env = gym.make(ENV_ID, render_mode="rgb_array", width=width, height=height)
    # Untimed warm-up: the first render creates the GL context and aims the camera.
    env.reset(seed=SEED)
    env.render()
    return env


def bench_gymnasium(args):
    ungated_env = make_env(args.width, args.height)
    gated_env = RenderEvery(make_env(args.width, args.height), render_every=args.skip)
    space = ungated_env.action_space
    space.seed(SEED)
    plans = [[space.sample() for _ in range(args.steps)] for _ in range(args.episodes)]
    ungated = {"wall": 0.0, "render": 0.0, "frames": 0, "steps": 0, "fresh_needed": 0}
    gated = dict(ungated)
    physics_seconds = 0.0
    identical = kept_total = 0
    for episode, actions in enumerate(plans, start=1):
        physics_seconds += run_physics(ungated_env, actions, SEED + episode)
        reference = run_episode(ungated_env, actions, SEED + episode, args.skip, ungated)
        kept = run_episode(gated_env, actions, SEED + episode, args.skip, gated)
        kept_total += len(reference)
        identical += sum(np.array_equal(a, b) for a, b in zip(kept, reference, strict=True))
        print(
            f"after episode {episode}: ungated {ungated['wall']:.1f} s, gated {gated['wall']:.1f} s"
        )

    frames, steps, fresh_needed = ungated["frames"], ungated["steps"], ungated["fresh_needed"]
    stats = gated_env.render_stats.as_dict()
    step_seconds = physics_seconds / steps
    render_seconds = min(
        ungated["render"] / frames, stats["render_seconds"] / stats["fresh_renders"]
    )
    # The best the gated side can do: the physics alone plus the renders it cannot skip.
    # Everything else it spends (wrapper, reused frames) counts against its efficiency.
    ideal = ungated["wall"] / (physics_seconds + fresh_needed * render_seconds)
    speedup = ungated["wall"] / gated["wall"]
    return {
        "speedup": speedup,
        "ideal": ideal,
        "efficiency": speedup / ideal,
        "identical_fraction": identical / kept_total,
        "ungated_seconds": ungated["wall"],
        "gated_seconds": gated["wall"],
        "step_ms": 1000 * step_seconds,
        "render_ms": 1000 * render_seconds,
        "kept_frames": kept_total,
        "gated_fresh_renders": stats["fresh_renders"],
        "fresh_needed": fresh_needed,
    }


NATIVE_ENV = "SatelliteEnv"


def make_native(args, *, render_every=1):
    """A SatelliteEnv on MuJoCo's own bindings, warmed up (GL context, camera) untimed."""
    from torchrl.envs import SatelliteEnv

    env = SatelliteEnv(
        backend="mujoco",
        seed=SEED,
        from_pixels=True,
        render_width=args.width,
        render_height=args.height,
        render_every=render_every,
    )
    env.reset()  # every side makes this reset, so reset noise stays the same on all sides
    return env


def run_native_episode(env, actions):
    """Reset, then step through ``actions`` until done; return the number of steps made.

    Each step's tensordict is dropped once the next one is built, as a consumer that uses
    every frame and keeps none would (``rollout`` would stack every frame of the episode,
    a large copy that has nothing to do with rendering).
    """
    from torchrl.envs.utils import step_mdp

    tensordict = env.reset()
    for steps, action in enumerate(actions, start=1):
        tensordict["action"] = action
        tensordict = env.step(tensordict)
        done = bool(tensordict["next", "done"].all())
        tensordict = step_mdp(tensordict)
        if done:
            return steps
    return len(actions)


def bench_native(args):
    """torchrl's own MuJoCo env: ungated, torchrl's ``render_every``, docsaccel-gated, floor.

    The four sides run the same episodes (same reset noise, same actions), alternating
    episode by episode; the recorders keep one frame in ``skip``. The ungated side is
    gated with a schedule that keeps every frame: an exact pass-through that times each
    render.
    """
    import torch
    from torchrl.envs import TransformedEnv
    from torchrl.record import VideoRecorder

    from docsaccel.render import FrameSchedule, bind_recorder
    from docsaccel.render.native import gate_native_env

    def recorded(env):
        recorder = VideoRecorder(None, "satellite", skip=args.skip)
        return TransformedEnv(env, recorder), recorder

    ungated_env = make_native(args)
    timer = gate_native_env(ungated_env, FrameSchedule(1))
    sides = {
        "ungated": recorded(ungated_env),
        "torchrl": recorded(make_native(args, render_every=args.skip)),
        "gated": recorded(make_native(args)),
        # Renders the reset frames only: everything the gated side does but its renders.
        "floor": recorded(make_native(args, render_every=10**9)),
    }
    env, recorder = sides["gated"]
    (gate,) = bind_recorder(recorder, env)
    spec = ungated_env.action_spec
    generator = torch.Generator().manual_seed(SEED)
    plans = [
        [
            spec.space.low
            + (spec.space.high - spec.space.low) * torch.rand(spec.shape, generator=generator)
            for _ in range(args.torchrl_steps)
        ]
        for _ in range(args.torchrl_episodes)
    ]
    seconds = dict.fromkeys(sides, 0.0)
    first_frames = []  # stream positions of the episodes' first frames
    for episode, actions in enumerate(plans):
        for name, (env, _) in sides.items():
            started = time.perf_counter()
            steps = run_native_episode(env, actions)
            seconds[name] += time.perf_counter() - started
            if name == "ungated":
                first_frames.append(timer.render_stats.frames - steps)
        print(
            f"native after episode {episode + 1}: "
            + ", ".join(f"{name} {value:.1f} s" for name, value in seconds.items())
        )

    reference = sides["ungated"][1].obs

    def identical_fraction(name):
        kept = sides[name][1].obs
        same = sum(torch.equal(a, b) for a, b in zip(kept, reference, strict=True))
        return same / len(reference)

    frames = timer.render_stats.frames
    kept_frames = len(reference)
    fresh_needed = len({n for n in range(1, frames + 1) if n % args.skip == 0} | set(first_frames))
    render_seconds = min(
        timer.render_stats.mean_render_seconds, gate.render_stats.mean_render_seconds
    )
    # The best the gated side can do: the same stack rendering its episodes' first frames
    # (the floor side) plus the other renders it cannot skip. Everything else it spends
    # counts against its efficiency.
    floor_renders = len(first_frames)
    ideal = seconds["ungated"] / (
        seconds["floor"] + (fresh_needed - floor_renders) * render_seconds
    )
    speedup = seconds["ungated"] / seconds["gated"]
    torchrl_speedup = seconds["ungated"] / seconds["torchrl"]
    torchrl_identical = identical_fraction("torchrl")
    return {
        "native_env": f"{NATIVE_ENV}(backend='mujoco')",
        "native_speedup": speedup,
        "native_ideal": ideal,
        "native_efficiency": speedup / ideal,
        "native_identical_fraction": identical_fraction("gated"),
        "native_torchrl_speedup": torchrl_speedup,
        "native_torchrl_efficiency": torchrl_speedup / ideal,
        "native_torchrl_identical_fraction": torchrl_identical,
        "native_ungated_seconds": seconds["ungated"],
        "native_gated_seconds": seconds["gated"],
        "native_torchrl_seconds": seconds["torchrl"],
        "native_floor_seconds": seconds["floor"],
        "native_render_ms": 1000 * render_seconds,
        "native_kept_frames": kept_frames,
        "native_fresh_needed": fresh_needed,
        "native_gated_fresh_renders": gate.render_stats.fresh_renders,
        # Today's reference fields: torchrl's own render_every against rendering every step.
        "torchrl_speedup": torchrl_speedup,
        "torchrl_identical_fraction": torchrl_identical,
        "torchrl_kept_frames": kept_frames,
        "torchrl_env": f"{NATIVE_ENV}(backend='mujoco')",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000, help="steps per episode")
    parser.add_argument("--skip", type=int, default=16, help="the video keeps 1 frame in skip")
    parser.add_argument("--width", type=int, default=480)
    parser.add_argument("--height", type=int, default=360)
    parser.add_argument(
        "--torchrl-episodes", type=int, default=2, help="episodes of the torchrl-native sides"
    )
    parser.add_argument(
        "--torchrl-steps", type=int, default=400, help="steps per torchrl-native episode"
    )
    args = parser.parse_args()
    result = {
        "env": ENV_ID,
        "size": f"{args.width}x{args.height}",
        "episodes": args.episodes,
        "steps": args.steps,
        "skip": args.skip,
    }
    result.update(bench_gymnasium(args))
    result.update(bench_native(args))
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
