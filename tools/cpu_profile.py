"""The second CPU profile under which `make test` runs the tests again, standing for
another machine.

A number the book prints must not depend on the machine that computed it. Two things
decide the last bits of a float here: the BLAS kernel (numpy's bundled OpenBLAS picks
one for the CPU, and splits work over threads) and numpy's own dispatch to the widest
SIMD instructions the CPU has. The second profile changes both:

- ``OPENBLAS_CORETYPE=Sandybridge``: OpenBLAS's AVX kernels instead of the ones it
  picked for this CPU;
- ``OPENBLAS_NUM_THREADS=1``: one thread, so sums are split and added in another order;
- ``NPY_DISABLE_CPU_FEATURES``: numpy's dispatch targets above AVX2 (X86_V4 and the
  AVX512_* targets) that this CPU has, turned off; on a CPU without AVX-512, AVX2
  (X86_V3) is turned off instead.

    python tools/cpu_profile.py --env    the profile as KEY=VALUE words,
                                         for `env $(...) command`
    python tools/cpu_profile.py --show   what runs in this process: BLAS core type and
                                         threads, numpy targets; with --expect-profile,
                                         fails unless the second profile took effect
"""

from __future__ import annotations

import sys


def _dispatch_found() -> list[str]:
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [target for target in __cpu_dispatch__ if __cpu_features__.get(target)]


def second_profile() -> dict[str, str]:
    """The environment of the second profile for this machine's CPU."""
    found = _dispatch_found()
    wide = [
        target for target in found if target == "X86_V4" or target.startswith("AVX512")
    ]
    disabled = wide or [target for target in found if target == "X86_V3"]
    profile = {"OPENBLAS_CORETYPE": "Sandybridge", "OPENBLAS_NUM_THREADS": "1"}
    if disabled:
        profile["NPY_DISABLE_CPU_FEATURES"] = ",".join(disabled)
    return profile


def show(expect_profile: bool) -> int:
    import os

    import numpy
    import threadpoolctl

    blas = [
        pool for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"
    ]
    found = _dispatch_found()
    print(
        f"numpy {numpy.__version__}: dispatch targets in use "
        f"{found or ['baseline only']}; "
        + "; ".join(
            f"{pool['internal_api']} {pool['version']} kernel "
            f"{pool.get('architecture')}, "
            f"{pool['num_threads']} threads"
            for pool in blas
        )
    )
    if not expect_profile:
        return 0
    problems = []
    if not any(
        str(pool.get("architecture", "")).lower() == "sandybridge" for pool in blas
    ):
        problems.append("OpenBLAS did not switch to the Sandybridge kernel")
    if any(pool["num_threads"] != 1 for pool in blas):
        problems.append("OpenBLAS runs more than one thread")
    disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()
    still = [target for target in disabled if target in found]
    if still:
        problems.append(f"numpy still dispatches to {still}")
    for problem in problems:
        print(f"second CPU profile not in effect: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    if argv == ["--env"]:
        print(" ".join(f"{key}={value}" for key, value in second_profile().items()))
        return 0
    if argv in (["--show"], ["--show", "--expect-profile"]):
        return show("--expect-profile" in argv)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
