"""What results record about the code and the host (graphnorm.provenance)."""
from graphnorm.provenance import cpu_model


def _cpuinfo(tmp_path, text):
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    return path


def test_cpu_model_names_generation_and_vector_width(tmp_path):
    # two hosts that both call themselves "AMD EPYC": their timings differ by the generation
    zen3 = "processor\t: 0\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse4_2 avx avx2\n"
    zen4 = zen3.replace("model\t\t: 1", "model\t\t: 17").replace("avx2", "avx2 avx512f avx512bw")
    a, b = cpu_model(_cpuinfo(tmp_path, zen3)), cpu_model(_cpuinfo(tmp_path, zen4))
    assert a.startswith("AMD EPYC (family 25 model 1, avx2; ") and a.endswith(" cpus)")
    assert "model 17, avx512f;" in b and a != b


def test_cpu_model_without_cpuinfo(tmp_path):
    assert cpu_model(tmp_path / "missing").endswith(" cpus)")
    assert cpu_model(_cpuinfo(tmp_path, "model name\t: Some CPU\n")).startswith("Some CPU (")
