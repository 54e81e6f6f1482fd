"""What the vision models share: the pretrained-weights refusal."""

from __future__ import annotations


class PretrainedWeightsUnavailable(RuntimeError):
    """`pretrained=True` was asked for, but pullback has no weight files and does not
    download anything."""


def no_pretrained(arch: str, pretrained: bool) -> None:
    """Raise `PretrainedWeightsUnavailable` when `pretrained` is set."""
    if pretrained:
        raise PretrainedWeightsUnavailable(
            f"{arch}(pretrained=True): pretrained weights cannot be downloaded (pullback ships "
            "no weight files and does not access the network); build the model with "
            "pretrained=False and load saved weights with "
            "model.set_state_dict(paddle.load('<file>.pdparams'))"
        )
