"""RDKit descriptors as molecule features: values, failures named per molecule, the cache,
batches and the model's training-split standardization."""
import numpy as np
import pytest
import torch
from rdkit import Chem
from rdkit.Chem import Descriptors

from graphnorm.chem import FeaturizerConfig, featurize_many, graph_data
from graphnorm.chem.descriptors import descriptor_count, descriptor_names, rdkit_descriptors
from graphnorm.chem.molecule import FeaturizationError
from graphnorm.graph import collate_graphs


def test_values_are_signed_logs_of_rdkit_descriptors():
    mol = Chem.MolFromSmiles("CC(=O)Nc1ccc(O)cc1")  # paracetamol
    got = rdkit_descriptors(mol, "x")[0]
    names = descriptor_names()
    assert got.shape == (descriptor_count(),) and len(names) == descriptor_count()
    for name, fn in (("MolLogP", Descriptors.MolLogP), ("TPSA", Descriptors.TPSA),
                     ("NumHDonors", Descriptors.NumHDonors)):
        x = fn(mol)
        assert got[names.index(name)] == pytest.approx(np.sign(x) * np.log1p(abs(x)), rel=1e-5)
    assert not any(n.startswith("BCUT2D") or "PartialCharge" in n for n in names)


def test_a_failing_descriptor_names_the_molecule(monkeypatch):
    import graphnorm.chem.descriptors as d

    broken = (("Boom", lambda m: float("nan")),) + d.descriptor_functions()[1:]
    monkeypatch.setattr(d, "descriptor_functions", lambda: broken)
    with pytest.raises(FeaturizationError, match="Boom is nan for SMILES 'CCO'"):
        d.rdkit_descriptors(Chem.MolFromSmiles("CCO"), "CCO")
    result = featurize_many(["CCO", "C1CC"], FeaturizerConfig(descriptors=True))
    assert result.graphs == [None, None]
    assert "Boom" in result.errors[0] and "C1CC" in result.errors[1]  # per row, not a crash


def test_featurized_batches_carry_descriptors_and_configs_key_them():
    plain, with_desc = FeaturizerConfig(), FeaturizerConfig(descriptors=True)
    assert "descriptors" not in plain.to_dict() and with_desc.to_dict()["descriptors"] is True
    assert with_desc.tag.endswith("-rd") and plain.tag != with_desc.tag  # separate caches
    result = featurize_many(["CCO", "c1ccccc1", "[Na+].[Cl-]"], with_desc)
    batch = collate_graphs([graph_data(g, s) for g, s in zip(result.graphs, ["a", "b", "c"])])
    assert batch.descriptors.shape == (3, descriptor_count())
    with pytest.raises(ValueError, match="takes 7 RDKit descriptors"):
        batch.descriptor_values(7)
    with pytest.raises(ValueError, match=r"descriptors must be true, false or one of \['fast', 'rdkit2d'\], got 'yes'"):
        FeaturizerConfig(descriptors="yes")


def test_the_fast_set_is_rdkits_cpp_descriptors_and_keys_its_own_cache():
    from rdkit.Chem import Crippen, rdMolDescriptors

    fast = FeaturizerConfig(descriptors="fast")
    assert FeaturizerConfig(descriptors="rdkit2d") == FeaturizerConfig(descriptors=True)
    assert fast.to_dict()["descriptors"] == "fast" and fast.tag.endswith("-rdfast")
    assert FeaturizerConfig.from_dict(fast.to_dict()) == fast  # checkpoints round-trip it
    names = descriptor_names("fast")
    assert descriptor_count("fast") == len(names) < descriptor_count()
    assert names[-1] == "MQN42" and "CrippenClogP" in names and "SlogP_VSA12" in names
    mol = Chem.MolFromSmiles("CC(=O)Nc1ccc(O)cc1")
    got = rdkit_descriptors(Chem.Mol(mol), "x", "fast")[0]
    for name, x in (("CrippenClogP", Crippen.MolLogP(mol)), ("tpsa", rdMolDescriptors.CalcTPSA(mol)),
                    ("MQN1", rdMolDescriptors.MQNs_(mol)[0]),
                    ("PEOE_VSA14", rdMolDescriptors.PEOE_VSA_(mol)[13])):
        assert got[names.index(name)] == pytest.approx(np.sign(x) * np.log1p(abs(x)), rel=1e-5), name
    result = featurize_many(["CCO", "[Na+].[Cl-]", "[Fe+2]", "C1CC"], fast)
    assert [g["descriptors"].shape for g in result.graphs[:3]] == [(1, len(names))] * 3
    assert result.graphs[3] is None and "C1CC" in result.errors[3]


def test_a_failing_fast_descriptor_names_the_molecule(monkeypatch):
    import graphnorm.chem.descriptors as d

    def broken(mol):
        raise RuntimeError("no charges")
    monkeypatch.setattr(d, "_fast_values", broken)
    with pytest.raises(FeaturizationError, match="fast descriptors failed for SMILES 'CCO': RuntimeError"):
        d.rdkit_descriptors(Chem.MolFromSmiles("CCO"), "CCO", "fast")
    monkeypatch.setattr(d, "_fast_values", lambda mol: np.array([np.inf] + [0.0] * (len(d._fast_names()) - 1)))
    with pytest.raises(FeaturizationError, match="descriptor exactmw is inf for SMILES 'CCO'"):
        d.rdkit_descriptors(Chem.MolFromSmiles("CCO"), "CCO", "fast")


def test_encoder_standardizes_with_training_statistics():
    from graphnorm.graph.encodings import DescriptorEncoder

    enc = DescriptorEncoder(3, 4)
    train = torch.tensor([[1.0, 5.0, 2.0], [3.0, 5.0, 4.0], [5.0, 5.0, 6.0]])
    enc.fit_scaling(train)
    assert enc.mean.tolist() == pytest.approx([3.0, 5.0, 4.0])
    assert enc.std.tolist() == pytest.approx([2.0, 1.0, 2.0])  # constant descriptor: std 1
    batch = type("B", (), {"descriptor_values": lambda self, w: torch.tensor([[3.0, 5.0, 1e6]])})()
    with torch.no_grad():
        enc.proj.weight.copy_(torch.eye(4, 3))
        enc.proj.bias.zero_()
        out = enc(batch)[0].tolist()
    # (3 - 3) / 2 = 0, (5 - 5) / 1 = 0, a far outlier clipped at 6 (GELU(6) ~ 6)
    assert out[:2] == pytest.approx([0.0, 0.0]) and out[2] == pytest.approx(6.0, rel=1e-3)
    state = enc.state_dict()  # checkpoints carry the statistics
    assert torch.equal(state["mean"], enc.mean) and torch.equal(state["std"], enc.std)
