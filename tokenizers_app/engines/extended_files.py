"""The child's file of an extended SentencePiece ``.model`` or Hugging Face ``tokenizer.json``
(``library_extension``): the parent's file, with the new pieces after every existing one. Run in
the sandbox child (``FileKind.extended_file``), which may load the library.

- a ``.model`` scores its new pieces below every existing score, in learned order (the library
  joins the best-scored pair first, so every join of the parent comes before any new one);
- a ``tokenizer.json`` gives them the ids after its largest (added tokens included), and appends
  their merges after the existing ones.
"""

from __future__ import annotations

import json

from .library_extension import Addition


def extended_model(data: bytes, additions: list[Addition]) -> bytes:
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    model = model_pb2.ModelProto()
    model.ParseFromString(data)
    lowest = min((piece.score for piece in model.pieces), default=0.0)
    for n, addition in enumerate(additions):
        piece = model.pieces.add()
        piece.piece = addition.piece
        piece.score = lowest - 1.0 - n
        piece.type = model_pb2.ModelProto.SentencePiece.NORMAL
    model.trainer_spec.vocab_size = len(model.pieces)
    return model.SerializeToString()


def extended_json(data: bytes, additions: list[Addition]) -> bytes:
    doc = json.loads(data)
    model = doc["model"]
    vocab: dict[str, int] = model["vocab"]
    added = [token["id"] for token in doc.get("added_tokens") or []]
    next_id = max([*vocab.values(), *added]) + 1
    merges = list(model.get("merges") or [])
    pairs = [a for a in additions if a.left is not None]
    as_lists = (merges and not isinstance(merges[0], str)) or any(
        " " in a.left or " " in a.right for a in pairs)
    if as_lists:  # a piece with a space cannot be written "left right"
        merges = [m.split(" ", 1) if isinstance(m, str) else list(m) for m in merges]
    for addition in additions:
        vocab[addition.piece] = next_id
        next_id += 1
        if addition.left is not None:
            merges.append([addition.left, addition.right] if as_lists
                          else f"{addition.left} {addition.right}")
    model["merges"] = merges
    return json.dumps(doc, ensure_ascii=False).encode()
