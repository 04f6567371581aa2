"""Examples that run project code in child processes, for the cache's real builds.

``mylib/work.py`` holds the functions the children run (``triple``, ``pid``) and one no
example runs (``unused``); ``mylib/other.py`` holds what a Python started with
``subprocess`` imports. Each example prints what its children computed, and appends the
pids of the processes that computed it to the file ``$WORKER_PIDS`` names, so a test can
check that they are gone.

Example::

    project = children_project(tmp_path, ["plot_pool_spawn.py"], granularity="function")
    project.build().executed()   # {'plot_pool_spawn.py'}
"""

from __future__ import annotations

from pathlib import Path

from helpers.cache_project import CONF, Project, example_source

__all__ = ["EXAMPLES", "OTHER", "WORK", "children_project"]

WORK = (
    "import os\n\n\ndef triple(x):\n    return 3 * x\n\n\n"
    "def pid(x):\n    return os.getpid()\n\n\ndef unused():\n    return 0\n"
)
OTHER = "def triple(x):\n    return 3 * x\n"
_NOTE = "open(os.environ['WORKER_PIDS'], 'a').write(' '.join(map(str, set(pids))) + '\\n')\n"


def _pool(method: str, closed: bool = True) -> str:
    if closed:
        start = f"with multiprocessing.get_context({method!r}).Pool(2) as pool:\n"
        return (
            f"import multiprocessing\nimport os\n\nfrom mylib import work\n\n{start}"
            "    values = pool.map(work.triple, [1, 2, 3])\n"
            "    pids = pool.map(work.pid, range(6))\n"
            f"{_NOTE}print({method!r}, values)\n"
        )
    # Left to the garbage collector, as many examples leave their pool.
    return (
        "import multiprocessing\nimport os\n\nfrom mylib import work\n\n"
        f"pool = multiprocessing.get_context({method!r}).Pool(2)\n"
        "values = pool.map(work.triple, [1, 2, 3])\npids = pool.map(work.pid, range(6))\n"
        f"{_NOTE}print({method!r}, values)\n"
    )


def _joblib(backend: str) -> str:
    run = f"Parallel(n_jobs=2, backend={backend!r})"
    return (
        "import os\n\nfrom joblib import Parallel, delayed\n\nfrom mylib import work\n\n"
        f"values = {run}(delayed(work.triple)(i) for i in [1, 2, 3])\n"
        f"pids = {run}(delayed(work.pid)(i) for i in range(6))\n"
        f"{_NOTE}print({backend!r}, values)\n"
    )


#: Each example by name: what its children run, and how they are started.
EXAMPLES = {
    "plot_pool_fork.py": _pool("fork"),
    "plot_pool_spawn.py": _pool("spawn"),
    "plot_pool_forkserver.py": _pool("forkserver"),
    "plot_unclosed_fork.py": _pool("fork", closed=False),
    "plot_unclosed_forkserver.py": _pool("forkserver", closed=False),
    "plot_executor.py": (
        "import os\nfrom concurrent.futures import ProcessPoolExecutor\n\n"
        "from mylib import work\n\n"
        "with ProcessPoolExecutor(2) as executor:\n"
        "    values = list(executor.map(work.triple, [1, 2, 3]))\n"
        "    pids = list(executor.map(work.pid, range(6)))\n"
        f"{_NOTE}print('executor', values)\n"
    ),
    "plot_loky.py": _joblib("loky"),
    "plot_joblib_mp.py": _joblib("multiprocessing"),
    "plot_subprocess.py": (
        "import os\nimport subprocess\nimport sys\n\n"
        "env = dict(os.environ, PYTHONPATH=os.path.abspath('../..'))\n"
        "code = 'import os; from mylib.other import triple; print(triple(2), os.getpid())'\n"
        "out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,\n"
        "                     text=True, check=True).stdout.split()\n"
        "pids = [out[1]]\n"
        f"{_NOTE}print('subprocess', out[0])\n"
    ),
    "plot_os_fork.py": (
        "import os\nimport time\n\npid = os.fork()\nif pid == 0:\n    time.sleep(30)\n"
        "    os._exit(0)\npids = [pid]\n"
        f"{_NOTE}print('forked', pid > 0)\n"
    ),
}


def children_project(
    root: Path, examples: list[str], granularity: str = "module", conf: str = ""
) -> Project:
    """The tiny project with only ``examples`` (of :data:`EXAMPLES`) in its gallery."""
    project = Project(root)
    for path in (project.pristine / "docs" / "examples").glob("plot_*.py"):
        path.unlink()
    project.write("mylib/work.py", WORK)
    project.write("mylib/other.py", OTHER)
    for name in examples:
        project.write(f"docs/examples/{name}", example_source(name, EXAMPLES[name]))
    gallery = CONF.replace('"show_memory": False,', f'"show_memory": False, {conf}')
    project.write("docs/conf.py", gallery + f"docsaccel_cache_granularity = {granularity!r}\n")
    return project
