"""Pure parts: the safetensors header reader and the shape/dtype checks (no Django, nothing loaded)."""
import io
import json
import pickle
import struct

import pytest

from ml.kinds import ConfigError, expected_shapes
from ml.safetensors_check import UploadRejected, check_tensors, read_header


def blob(tensors: dict, metadata=None, trailing=b"", cut=0) -> bytes:
    """A safetensors file built by hand: {name: (dtype, shape)} with zero bytes as data."""
    sizes = {"F32": 4, "F16": 2, "I64": 8}
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    if metadata:
        header["__metadata__"] = metadata
    raw = json.dumps(header).encode()
    data = struct.pack("<Q", len(raw)) + raw + bytes(offset) + trailing
    return data[: len(data) - cut] if cut else data


def parse(data: bytes):
    return read_header(io.BytesIO(data), len(data))


def test_reads_a_file_written_by_the_safetensors_library(tmp_path):
    import torch
    from safetensors.torch import save_file

    save_file({"a": torch.zeros(3, 4), "b": torch.ones(2, dtype=torch.float16)}, str(tmp_path / "w.safetensors"),
              metadata={"names": "[]"})
    data = (tmp_path / "w.safetensors").read_bytes()
    header = parse(data)
    assert header.tensors["a"].shape == (3, 4) and header.tensors["a"].dtype == "F32"
    assert header.tensors["b"].dtype == "F16" and header.metadata == {"names": "[]"}
    assert parse(blob({"x": ("F32", (2, 2))})).data_bytes == 16


@pytest.mark.parametrize("data, match", [
    (b"", "shorter than the 8-byte"),
    (b"hello", "shorter than the 8-byte"),
    (pickle.dumps({"weights": [1, 2, 3]}), "pickle"),
    (b"PK\x03\x04" + bytes(200), "zip"),
    (struct.pack("<Q", 10) + b"not json!!", "not valid JSON"),
    (struct.pack("<Q", 4) + b"[1] ", "not a JSON object"),
    (struct.pack("<Q", 1 << 40) + b"{}", "header length"),
    (struct.pack("<Q", 500) + b"{}", "Truncated"),
])
def test_rejects_what_is_not_safetensors(data, match):
    with pytest.raises(UploadRejected, match=match):
        parse(data)


def test_rejects_truncated_padded_and_inconsistent_files():
    good = blob({"x": ("F32", (4, 4))})
    with pytest.raises(UploadRejected, match="truncated"):
        parse(good[:-3])
    with pytest.raises(UploadRejected, match="extra bytes"):
        parse(good + b"\0\0")
    lying = json.dumps({"x": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 10]}}).encode()
    with pytest.raises(UploadRejected, match="bytes needed"):
        parse(struct.pack("<Q", len(lying)) + lying + bytes(10))
    unknown = json.dumps({"x": {"dtype": "PICKLE", "shape": [1], "data_offsets": [0, 1]}}).encode()
    with pytest.raises(UploadRejected, match="unknown dtype"):
        parse(struct.pack("<Q", len(unknown)) + unknown + bytes(1))
    with pytest.raises(UploadRejected, match="no tensors"):
        parse(struct.pack("<Q", 2) + b"{}")


def test_check_tensors_names_shapes_and_dtypes():
    header = parse(blob({"w": ("F32", (5, 3)), "b": ("F16", (5,)), "extra": ("F32", (1,)), "i": ("I64", (2,))}))
    problems = check_tensors(header, {"w": (5, 3), "b": (4,), "p": (3,), "i": (2,)})
    text = " | ".join(problems)
    assert "missing tensors: p" in text and "unexpected tensors: extra" in text
    assert "b: shape (5,), the config needs (4,)" in text and "i: dtype I64" in text
    assert "w:" not in text
    assert check_tensors(parse(blob({"w": ("F32", (5, 3))})), {"w": (5, 3)}) == []


def test_expected_shapes_per_kind():
    assert expected_shapes("card_embeddings", {"vocab": 23, "dim": 8}) == {
        "embeddings": (23, 8), "classifier.weight": (23, 8), "classifier.bias": (23,)}
    arche = expected_shapes("draft_bot", {"format": "archetype-v1", "cards": ["a", "b"], "archetypes": ["x"]})
    assert arche == {"weights": (2, 1), "prior": (1,), "bias": (2,)}
    neural = expected_shapes("draft_bot", {"format": "neural-pick-v1", "cards": list("abcd"), "ensemble": 2,
                                           "net": {"hidden": [16, 8]}})
    assert neural["member1.layers.0.weight"] == (16, 4) and neural["member0.out_bias"] == (4,)
    diffusion = expected_shapes("deck_diffusion", {"model": {"dim": 8, "d_model": 16, "heads": 2, "layers": 1, "ff": 32,
                                                             "side_layers": 1, "context_layers": 1}})
    assert len(diffusion) > 10 and all(isinstance(s, tuple) for s in diffusion.values())
    with pytest.raises(ConfigError, match="lacks vocab"):
        expected_shapes("card_embeddings", {"dim": 8})
    with pytest.raises(ConfigError, match="unknown draft bot format"):
        expected_shapes("draft_bot", {"format": "pickle"})
    policy = expected_shapes("game_value", {"hidden": [32]})
    assert policy["layer0.weight"] == (32, 36) and policy["layer1.weight"] == (1, 32) and policy["mean"] == (36,)
    with pytest.raises(ConfigError, match="lacks hidden"):
        expected_shapes("game_value", {})
    with pytest.raises(ConfigError, match="widths"):
        expected_shapes("game_value", {"hidden": ["wide"]})
    with pytest.raises(ConfigError, match="not supported"):
        expected_shapes("game_oracle", {})


def test_the_shipped_weights_match_their_configs():
    from pathlib import Path

    from ml.kinds import dtypes
    from ml.safetensors_check import read_header_path

    root = Path(__file__).resolve().parents[2] / "ml" / "weights"
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest
    for entry in manifest:
        header = read_header_path(root / entry["file"])
        assert check_tensors(header, expected_shapes(entry["kind"], entry["config"]),
                             dtypes(entry["kind"], entry["config"])) == [], entry["file"]
