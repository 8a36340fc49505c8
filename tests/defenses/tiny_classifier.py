"""A tiny BERT text classifier written as ``save_pretrained`` would, without torch.

The test process never imports torch (it stays out of the workers' memory): the weights are
numpy arrays saved with ``safetensors.numpy``, the tokenizer is a WordPiece ``vocab.txt``.
The weights are set by hand so the model discriminates for a reason one can read: each
embedding carries a cue strength on one axis (the generic prompt-injection vocabulary below,
English and Chinese, the same kind of lexicon as the keyword detector's and not DIBench's
probe wordings; every other token carries none), the first layer's attention is uniform so
the [CLS] state takes the mean over the text, the second layer passes it through, and the
pooler and head read that axis. So P(INJECTION) grows with the share of cue tokens: an
item title padded with an instruction scores high, ordinary item text near zero.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

H = 32  # hidden size
LAYERS = 2
HEADS = 2
INTER = 64
POSITIONS = 128
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _tokens(text: str) -> list[str]:
    return text.split()


# token -> cue strength: words that address or instruct an agent rather than describe an item
STRONG = _tokens(
    "ignore disregard forget override bypass instruction instructions prompt prompts rules "
    "constraints requirements prior previous earlier system assistant agent agents llm task "
    "tasks completed answer correct verified priority 忽 忘 令"
)
WEAK = _tokens(
    "new must should select choose pick tap click done finished complete urgent immediately "
    "important attention note status output > < # { } ` \\ | [ ] "
    "略 指 任 务 完 成 答 案 选 择 必 须 请 系 统 掉 点"
)
NEUTRAL = _tokens("the a an of and for with to in on is : . , ! ? ' \" - ( ) ##s ##es ##ed ##ing")
# [CLS] and [SEP] carry a negative cue: a text needs more than two strong cue words (or four
# weak ones) to lean towards INJECTION at all, so a short button label with one of these
# words ("Select seats", "筛选") stays benign
OFFSET = -1.0

CUE_SCALE = 3.0  # the cue axis of a strong token's embedding (a weak one has half)
MIX = 20.0  # how strongly the first layer's averaged context outweighs the token itself
POOL_GAIN = 20.0
HEAD_GAIN, HEAD_BIAS = 10.0, 5.0  # logit(INJECTION) - logit(BENIGN) = 10 * pooled - 5


def vocabulary() -> list[str]:
    return list(dict.fromkeys(SPECIAL + NEUTRAL + STRONG + WEAK))


def _weights(vocab: list[str]) -> dict[str, np.ndarray]:
    """Every tensor BertForSequenceClassification loads, named as it names them."""
    f32 = np.float32
    base = np.tile(np.array([1.0, -1.0], f32), (H - 2) // 2)  # zero mean over its 30 dims
    strength = {t: 1.0 for t in STRONG} | {t: 0.5 for t in WEAK}
    strength |= {"[CLS]": OFFSET, "[SEP]": OFFSET}
    words = np.zeros((len(vocab), H), f32)
    for i, token in enumerate(vocab):
        cue = CUE_SCALE * strength.get(token, 0.0)
        words[i, :2] = (cue, -cue)  # the cue axis, balanced so the row's mean stays 0
        words[i, 2:] = base
    eye, zeros = np.eye(H, dtype=f32), np.zeros((H, H), f32)
    w: dict[str, np.ndarray] = {
        "bert.embeddings.word_embeddings.weight": words,
        "bert.embeddings.position_embeddings.weight": np.zeros((POSITIONS, H), f32),
        "bert.embeddings.token_type_embeddings.weight": np.zeros((2, H), f32),
        "bert.embeddings.LayerNorm.weight": np.ones(H, f32),
        "bert.embeddings.LayerNorm.bias": np.zeros(H, f32),
    }
    for layer in range(LAYERS):
        p = f"bert.encoder.layer.{layer}."
        mixing = layer == 0  # layer 0 averages the text into every token; layer 1 passes
        w |= {
            p + "attention.self.query.weight": zeros,  # equal scores: uniform attention
            p + "attention.self.query.bias": np.zeros(H, f32),
            p + "attention.self.key.weight": zeros,
            p + "attention.self.key.bias": np.zeros(H, f32),
            p + "attention.self.value.weight": eye,
            p + "attention.self.value.bias": np.zeros(H, f32),
            p + "attention.output.dense.weight": eye * (MIX if mixing else 0.0),
            p + "attention.output.dense.bias": np.zeros(H, f32),
            p + "attention.output.LayerNorm.weight": np.ones(H, f32),
            p + "attention.output.LayerNorm.bias": np.zeros(H, f32),
            p + "intermediate.dense.weight": np.zeros((INTER, H), f32),
            p + "intermediate.dense.bias": np.zeros(INTER, f32),
            p + "output.dense.weight": np.zeros((H, INTER), f32),  # the feed-forward adds 0
            p + "output.dense.bias": np.zeros(H, f32),
            p + "output.LayerNorm.weight": np.ones(H, f32),
            p + "output.LayerNorm.bias": np.zeros(H, f32),
        }
    pool = np.zeros((H, H), f32)
    pool[0, 0] = POOL_GAIN
    head = np.zeros((2, H), f32)
    head[1, 0] = HEAD_GAIN
    w |= {
        "bert.pooler.dense.weight": pool,
        "bert.pooler.dense.bias": np.zeros(H, f32),
        "classifier.weight": head,
        "classifier.bias": np.array([0.0, -HEAD_BIAS], f32),
    }
    return w


def build(folder: Path, labels: tuple[str, str] = ("BENIGN", "INJECTION")) -> Path:
    """Write the model folder (config, weights, tokenizer) and return it."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary()
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    config = {
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "vocab_size": len(vocab),
        "hidden_size": H,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": INTER,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": POSITIONS,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "id2label": {"0": labels[0], "1": labels[1]},
        "label2id": {labels[0]: 0, labels[1]: 1},
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    tokenizer = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": True,
        "tokenize_chinese_chars": True,
        "model_max_length": POSITIONS,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    save_file(_weights(vocab), str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder
