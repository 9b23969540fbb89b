"""The llama.cpp that scripts/setup.sh builds runs on every x86-64 machine with AVX2.

llama.cpp's default build (-march=native) compiled AVX-512 and AMX code on one machine that crashed
in ``decode`` on another (issue: the test command on every CPU). setup.sh turns those off; this test
reads the machine code of the installed libraries and fails on any AVX-512 or AMX instruction, so
the build flags, not the CPU that happens to run CI, decide whether the build is portable.
"""

from __future__ import annotations

import importlib.util
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

#: AVX-512 registers (zmm, opmasks, the upper 16 xmm/ymm that only EVEX encodes) and AMX/AVX-512-only
#: mnemonics, as objdump (AT&T syntax) prints them.
AVX512_OR_AMX = re.compile(
    r"%zmm\d|%k[0-7]\b|%[xy]mm(1[6-9]|2\d|3[01])\b"
    r"|\b(ldtilecfg|sttilecfg|tileloadd\w*|tilestored|tilezero|tilerelease|tdp\w+)\b"
    r"|\b(vpternlog[dq]|vperm[it]2\w+|valign[dq]|vpro[lr]v?[dq]|vpcompress\w|vpexpand\w|vpmov\w*2m"
    r"|vpmovm2\w|vextract[fi](32x[48]|64x[24])|vinsert[fi](32x[48]|64x[24])|vbroadcast[fi](32x\d|64x\d)"
    r"|vpdpbusds?|vpdpwssds?|vdpbf16ps|vcvtne2ps2bf16|vfixupimm\w+|vgetexp\w+|vrndscale\w+|vscalef\w+)\b"
)


def llama_libraries() -> list[Path]:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        pytest.skip("llama-cpp-python is not installed (requirements-llama.txt, scripts/setup.sh)")
    libs = sorted(p for p in (Path(spec.origin).parent / "lib").glob("*.so") if not p.is_symlink())
    if not libs:
        pytest.skip("llama-cpp-python has no shared libraries in llama_cpp/lib (not built by setup.sh)")
    return libs


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the AVX-512/AMX check is about x86-64 builds")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
def test_the_llama_cpp_build_has_no_avx512_or_amx_code():
    libraries = llama_libraries()
    offending: dict[str, list[str]] = {}
    avx2 = 0
    for lib in libraries:
        text = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True, check=True
        ).stdout
        avx2 += text.count("%ymm")
        hits = [line.strip() for line in text.splitlines() if AVX512_OR_AMX.search(line)]
        if hits:
            offending[lib.name] = hits[:5]
    assert not offending, (
        f"llama-cpp-python was built with AVX-512 or AMX code, which crashes on CPUs without them: "
        f"{offending}. Fix: rm .venv/galley-llama-cpp-build.txt && scripts/setup.sh (portable flags)"
    )
    assert avx2 > 0, "no AVX2 code at all: the build lost its vector kernels (check GALLEY_LLAMA_CMAKE_ARGS)"


def test_the_pattern_finds_avx512_and_amx_and_passes_avx2():
    assert AVX512_OR_AMX.search("vaddps %zmm1,%zmm2,%zmm3")
    assert AVX512_OR_AMX.search("vmovups (%rax),%ymm17")
    assert AVX512_OR_AMX.search("kmovw %k1,%eax")
    assert AVX512_OR_AMX.search("tdpbssd %tmm2,%tmm1,%tmm0")
    assert AVX512_OR_AMX.search("vpternlogd $0x96,%ymm2,%ymm1,%ymm0")
    assert not AVX512_OR_AMX.search("vfmadd231ps %ymm2,%ymm1,%ymm0")
    assert not AVX512_OR_AMX.search("vpmaddubsw %ymm3,%ymm2,%ymm1")
    assert not AVX512_OR_AMX.search("vmovdqu 0x20(%rsp),%xmm15")
