"""Question metadata (difficulty, bloom, concepts, prerequisites, sources, claims): each slip
refused at its file and line, prerequisites checked against the whole bank, `--strict`
requiring what CI requires, and the catalog (and its cache) carrying what the pack states."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.content import load_catalog
from bot.content.items import Meta
from bot.content.schema import versioned
from bot.content.validate import load_bank
from tests.conftest import BUNDLED

QUESTION = """\
  - id: {qid}
    prompt: "What does {qid} test?"
    options:
      - {{en: "Alpha {qid}", correct: true}}
      - "Bravo {qid}"
      - "Gamma {qid}"
    explanation: "Because."
"""


def pack(pack_id: str, *questions: tuple[str, str]) -> str:
    """A one-language pack: (question id, metadata lines indented under the question)."""
    body = "".join(QUESTION.format(qid=qid) + meta for qid, meta in questions)
    return f"id: {pack_id}\ntitle: Metadata\nlanguage: en\nquestions:\n{body}"


FULL = """\
    difficulty: hard
    bloom: analyse
    concepts: [activation-memory]
    sources:
      - "arXiv:2205.05198"
      - "https://github.com/NVIDIA/Megatron-LM/blob/core_r0.12.0/megatron/training/x.py (r0.12)"
    claims:
      - library: Megatron-LM
        claim: "the interleaved schedule's bubble is divided by the model chunks per GPU"
"""


def write(root: Path, name: str, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / name
    path.write_text(text, encoding="utf-8")
    return path


def errors(root: Path, strict: bool = False) -> list[str]:
    catalog, problems = load_bank(root, strict)
    found = [str(p) for p in problems if not p.warning]
    assert (catalog is None) == bool(found)
    return found


def test_full_metadata_is_carried_to_the_catalog(tmp_path: Path) -> None:
    write(tmp_path, "m.yaml", pack("m", ("m-one", FULL)))
    assert errors(tmp_path, strict=True) == []
    meta = load_catalog(tmp_path).question("m", "m-one").meta
    assert meta == Meta(
        "hard", "analyse", ("activation-memory",), (),
        ("arXiv:2205.05198", "https://github.com/NVIDIA/Megatron-LM/blob/core_r0.12.0/megatron/"
         "training/x.py (r0.12)"),
        (("Megatron-LM", "the interleaved schedule's bubble is divided by the model chunks "
          "per GPU"),))


def test_metadata_survives_the_content_cache(tmp_path: Path) -> None:
    root = tmp_path / "packs"
    write(root, "m.yaml", pack("m", ("m-one", FULL), ("m-two", "")))
    first = load_catalog(root, tmp_path / "cache")
    again = load_catalog(root, tmp_path / "cache")
    assert again.question("m", "m-one").deferred  # read back from the cache
    assert again.question("m", "m-one").meta == first.question("m", "m-one").meta
    assert again.question("m", "m-one").meta is not None
    assert again.question("m", "m-two").meta is None


def test_the_json_export_carries_the_metadata(tmp_path: Path) -> None:
    write(tmp_path, "m.yaml", pack("m", ("m-one", FULL), ("m-two", "")))
    exported = load_catalog(tmp_path).quizzes["m"].export()["questions"]
    assert exported[0]["difficulty"] == "hard" and exported[0]["concepts"] == [
        "activation-memory"]
    assert exported[0]["claims"][0]["library"] == "Megatron-LM"
    assert "difficulty" not in exported[1] and "sources" not in exported[1]
    json.dumps(exported)


@pytest.mark.parametrize(("meta", "line", "message"), [
    ("    bloom: analyze\n", 12,
     "question 1.bloom must be one of 'remember', 'understand', 'apply', 'analyse', "
     "'evaluate' or 'create', not 'analyze'"),
    ("    difficulty: tough\n", 12,
     "question 1.difficulty must be one of 'easy', 'medium' or 'hard', not 'tough'"),
    ("    concepts: []\n", 12, "question 1.concepts has 0, at least 1 needed"),
    ("    concepts: [Activation_Memory]\n", 12, "question 1.concept 1 must be lowercase"),
    ("    concepts: [a, b, a]\n", 12, "question 1.concepts: listed more than once: a"),
    ('    sources: ["arXiv:2205.05198", "http://example.com/docs"]\n', 12,
     "question 1.source 2: a source is an arXiv id (arXiv:2205.05198) or an https link"),
    ('    sources:\n      - "Korthikanti et al. 2022"\n', 13,
     "question 1.source 1: a source is an arXiv id"),
    ("    claims:\n      - {library: Deepspeed, claim: x}\n", 13,
     "question 1.claim 1.library must be one of 'PyTorch', 'DeepSpeed'"),
    ("    claims:\n      - {library: DeepSpeed}\n", 13, "question 1.claim 1.claim is missing"),
    # a claim without a release to check it against: a paper or an unversioned page
    ('    sources: ["arXiv:2205.05198", "https://deepspeed.readthedocs.io/en/latest/"]\n'
     "    claims:\n      - {library: DeepSpeed, claim: no_sync() raises under ZeRO-2}\n", 13,
     "question 1.claims: claims need a source naming the release they hold for"),
    ("    claims:\n      - {library: DeepSpeed, claim: no_sync() raises under ZeRO-2}\n", 12,
     "the sources are: none"),
    ("    concepts: [fsdp]\n    prerequisites: [fsdp]\n", 13,
     "question 1.prerequisites: fsdp is both a concept and a prerequisite of the question"),
    ("    sourcs: []\n", 12, "question 1.sourcs: unknown key"),
])
def test_each_slip_is_refused_at_its_line(
    tmp_path: Path, meta: str, line: int, message: str
) -> None:
    path = write(tmp_path, "m.yaml", pack("m", ("m-one", meta)))
    found = errors(tmp_path)
    assert any(e.startswith(f"{path}:{line}: error: ") and message in e for e in found), found


def test_a_prerequisite_must_be_a_concept_of_the_bank(tmp_path: Path) -> None:
    """Across packs: a concept listed in another file counts; one listed nowhere is refused
    at the prerequisite's own line."""
    write(tmp_path, "a.yaml", pack("a", ("a-one", "    concepts: [transformer-layer]\n")))
    path = write(tmp_path, "b.yaml", pack(
        "b", ("b-one", "    concepts: [activation-memory]\n    prerequisites:\n"
              "      - transformer-layer\n      - attention-scores\n")))
    assert errors(tmp_path) == [
        f"{path}:15: error: question 1.prerequisite 2: prerequisite 'attention-scores' is no "
        "concept of the bank: no question of any pack lists it in its concepts"]
    # the pack alone: its other prerequisite names no concept either
    alone = tmp_path / "alone"
    write(alone, "b.yaml", path.read_text(encoding="utf-8"))
    assert len(errors(alone)) == 2


def test_a_dangling_prerequisite_is_found_beside_other_errors(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", pack("a", ("a-one", "    bloom: recall\n")))
    path = write(tmp_path, "b.yaml", pack("b", ("b-one", "    prerequisites: [nowhere]\n")))
    found = errors(tmp_path)
    assert any(e.startswith(f"{path}:12: error: question 1.prerequisite 1: prerequisite "
                            "'nowhere' is no concept") for e in found), found
    assert any("bloom must be one of" in e for e in found)


def test_strict_requires_difficulty_bloom_concepts_and_a_source(tmp_path: Path) -> None:
    path = write(tmp_path, "m.yaml", pack(
        "m", ("m-one", FULL), ("m-two", "    difficulty: easy\n    concepts: [x]\n")))
    assert errors(tmp_path) == []  # optional without --strict: user packs and imports load
    assert errors(tmp_path, strict=True) == [
        f"{path}:21: error: question 2: 'm-two' has no bloom, sources (--strict requires "
        "difficulty, bloom, concepts and at least one source of every question)"]


def test_strict_validate_on_the_command_line(tmp_path: Path) -> None:
    path = write(tmp_path, "m.yaml", pack("m", ("m-one", "")))
    proc = subprocess.run([sys.executable, "-m", "bot", "content", "validate", "--strict",
                           str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"{path}:5: error: question 1: 'm-one' has no difficulty, bloom, concepts, " \
        "sources" in proc.stderr


def test_a_release_is_a_version_tag_or_commit_in_a_link_or_its_note() -> None:
    assert versioned("https://pytorch.org/docs/2.5/fsdp.html")
    assert versioned("https://github.com/NVIDIA/Megatron-LM/blob/core_r0.12.0/x.py")
    assert versioned("https://github.com/microsoft/DeepSpeed/releases/tag/v0.16.4")
    assert versioned("https://github.com/pytorch/pytorch/blob/0f3a9c1b2d/torch/x.py")
    assert versioned("https://deepspeed.readthedocs.io/en/latest/ (DeepSpeed v0.16.4)")
    assert not versioned("https://pytorch.org/docs/stable/fsdp.html")
    assert not versioned("https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/x.py")
    assert not versioned("arXiv:2205.05198")
    assert not versioned("https://arxiv.org/abs/2205.05198")  # a paper, not a release


def test_the_bundled_packs_carry_metadata_on_every_question() -> None:
    _, problems = load_bank(BUNDLED, strict=True)
    missing = [f"{Path(p.file).name}:{p.line}" for p in problems
               if "--strict requires" in p.message]
    assert missing == [], f"{len(missing)} questions without the metadata --strict requires"
