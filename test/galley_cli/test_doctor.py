"""galley doctor on the llama.cpp build: the CPU features it needs, and whether this CPU has them."""

from __future__ import annotations

from galley_cli.doctor import llama_build_check

PORTABLE = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | LLAMAFILE = 1 | OPENMP = 1 |"
)
NATIVE = PORTABLE + " AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 |"
ZEN4 = {"avx", "avx2", "fma", "f16c", "avx512f", "avx512_vnni"}


def test_a_portable_build_is_fine_on_any_avx2_cpu():
    check = llama_build_check(PORTABLE, ZEN4)
    assert check.ok and check.detail == "built for AVX, AVX2, FMA, F16C"


def test_a_native_build_says_where_it_runs():
    check = llama_build_check(NATIVE, ZEN4 | {"amx_int8"})
    assert check.ok and "AVX512" in check.detail and "runs only on CPUs that have these" in check.detail


def test_a_build_for_features_this_cpu_lacks_is_reported_with_the_fix():
    check = llama_build_check(NATIVE, ZEN4)  # the build wants AMX; this CPU has none
    assert not check.ok and "lacks AMX_INT8" in check.detail and "scripts/setup.sh" in check.fix
