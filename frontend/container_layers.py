"""`paddle.nn` containers and small layers: `Identity`, `ParameterList`, `LayerDict`,
and the loss layers of the functional losses (`NLLLoss`, `KLDivLoss`, `SmoothL1Loss`,
`MarginRankingLoss`, `CosineSimilarity`, `BCELoss`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pullback.frontend.nn_layers import Layer, _is_param
from pullback.frontend.ops import attention, composite, composite_loss


class Identity(Layer):
    """`paddle.nn.Identity`: returns its input (extra arguments are ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        """The input itself."""
        return input


class ParameterList(Layer):
    """`paddle.nn.ParameterList`: parameters registered under their indices."""

    def __init__(self, parameters: Iterable[Any] | None = None) -> None:
        super().__init__()
        for p in parameters or ():
            self.append(p)

    def append(self, parameter: Any) -> ParameterList:
        """Add a parameter at the end."""
        if not _is_param(parameter):
            raise TypeError(f"ParameterList: expected a parameter, got {type(parameter).__name__}")
        self.add_parameter(str(len(self)), parameter)
        return self

    def __getitem__(self, index: int) -> Any:
        return list(self._parameters.values())[index]

    def __setitem__(self, index: int, parameter: Any) -> None:
        keys = list(self._parameters)
        self.add_parameter(keys[index], parameter)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._parameters.values()))


class LayerDict(Layer):
    """`paddle.nn.LayerDict`: sublayers by name, in insertion order."""

    def __init__(self, sublayers: Mapping[str, Layer] | Iterable[tuple[str, Layer]] | None = None) -> None:
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key: str) -> Layer:
        return self._sub_layers[key]

    def __setitem__(self, key: str, sublayer: Layer) -> None:
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key: str) -> None:
        del self._sub_layers[key]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._sub_layers))

    def __contains__(self, key: object) -> bool:
        return key in self._sub_layers

    def clear(self) -> None:
        """Remove every sublayer."""
        self._sub_layers.clear()

    def pop(self, key: str) -> Layer:
        """Remove and return the sublayer `key`."""
        return self._sub_layers.pop(key)

    def keys(self) -> list[str]:
        """The names."""
        return list(self._sub_layers)

    def items(self) -> list[tuple[str, Layer]]:
        """`(name, layer)` pairs."""
        return list(self._sub_layers.items())

    def values(self) -> list[Layer]:
        """The layers."""
        return list(self._sub_layers.values())

    def update(self, sublayers: Mapping[str, Layer] | Iterable[tuple[str, Layer]]) -> None:
        """Add (or replace) layers from a mapping or `(name, layer)` pairs."""
        pairs = sublayers.items() if isinstance(sublayers, Mapping) else sublayers
        for key, layer in pairs:
            self.add_sublayer(key, layer)


class _LossLayer(Layer):
    """A loss layer calling `_fn(*inputs, **kwargs)` with arguments fixed at construction."""

    _fn: Any

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self._kwargs = kwargs

    def forward(self, *inputs: Any) -> Any:
        """The loss of the inputs."""
        return type(self)._fn(*inputs, **self._kwargs)


class NLLLoss(_LossLayer):
    """`paddle.nn.NLLLoss`: `F.nll_loss` of log-probabilities."""

    _fn = staticmethod(attention.nll_loss)

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 name: str | None = None) -> None:
        super().__init__(weight=weight, ignore_index=ignore_index, reduction=reduction, name=name)


class KLDivLoss(_LossLayer):
    """`paddle.nn.KLDivLoss`."""

    _fn = staticmethod(attention.kl_div)

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(reduction=reduction, log_target=log_target)


class SmoothL1Loss(_LossLayer):
    """`paddle.nn.SmoothL1Loss`."""

    _fn = staticmethod(attention.smooth_l1_loss)

    def __init__(self, reduction: str = "mean", delta: float = 1.0, name: str | None = None) -> None:
        super().__init__(reduction=reduction, delta=delta, name=name)


class MarginRankingLoss(_LossLayer):
    """`paddle.nn.MarginRankingLoss`."""

    _fn = staticmethod(attention.margin_ranking_loss)

    def __init__(self, margin: float = 0.0, reduction: str = "mean", name: str | None = None) -> None:
        super().__init__(margin=margin, reduction=reduction, name=name)


class CosineSimilarity(_LossLayer):
    """`paddle.nn.CosineSimilarity`."""

    _fn = staticmethod(attention.cosine_similarity)

    def __init__(self, axis: int = 1, eps: float = 1e-8) -> None:
        super().__init__(axis=axis, eps=eps)


class BCELoss(_LossLayer):
    """`paddle.nn.BCELoss`: `F.binary_cross_entropy` of probabilities."""

    _fn = staticmethod(composite.binary_cross_entropy)

    def __init__(self, weight: Any = None, reduction: str = "mean", name: str | None = None) -> None:
        super().__init__(weight=weight, reduction=reduction, name=name)


class HingeEmbeddingLoss(_LossLayer):
    """`paddle.nn.HingeEmbeddingLoss`."""

    _fn = staticmethod(composite_loss.hinge_embedding_loss)

    def __init__(self, margin: float = 1.0, reduction: str = "mean", name: str | None = None) -> None:
        super().__init__(margin=margin, reduction=reduction, name=name)


class CosineEmbeddingLoss(_LossLayer):
    """`paddle.nn.CosineEmbeddingLoss`."""

    _fn = staticmethod(composite_loss.cosine_embedding_loss)

    def __init__(self, margin: float = 0, reduction: str = "mean", name: str | None = None) -> None:
        super().__init__(margin=margin, reduction=reduction, name=name)


class TripletMarginLoss(_LossLayer):
    """`paddle.nn.TripletMarginLoss`."""

    _fn = staticmethod(composite_loss.triplet_margin_loss)

    def __init__(self, margin: float = 1.0, p: float = 2.0, epsilon: float = 1e-6, swap: bool = False,
                 reduction: str = "mean", name: str | None = None) -> None:
        super().__init__(margin=margin, p=p, epsilon=epsilon, swap=swap, reduction=reduction, name=name)


class MultiLabelSoftMarginLoss(_LossLayer):
    """`paddle.nn.MultiLabelSoftMarginLoss`."""

    _fn = staticmethod(composite_loss.multi_label_soft_margin_loss)

    def __init__(self, weight: Any = None, reduction: str = "mean", name: str | None = None) -> None:
        super().__init__(weight=weight, reduction=reduction, name=name)


class MultiMarginLoss(_LossLayer):
    """`paddle.nn.MultiMarginLoss`."""

    _fn = staticmethod(composite_loss.multi_margin_loss)

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Any = None, reduction: str = "mean",
                 name: str | None = None) -> None:
        super().__init__(p=p, margin=margin, weight=weight, reduction=reduction, name=name)


class SoftMarginLoss(_LossLayer):
    """`paddle.nn.SoftMarginLoss`."""

    _fn = staticmethod(composite_loss.soft_margin_loss)

    def __init__(self, reduction: str = "mean", name: str | None = None) -> None:
        super().__init__(reduction=reduction, name=name)


class PoissonNLLLoss(_LossLayer):
    """`paddle.nn.PoissonNLLLoss`."""

    _fn = staticmethod(composite_loss.poisson_nll_loss)

    def __init__(self, log_input: bool = True, full: bool = False, epsilon: float = 1e-8,
                 reduction: str = "mean", name: str | None = None) -> None:
        composite.check_reduction("PoissonNLLLoss", reduction)
        super().__init__(log_input=log_input, full=full, epsilon=epsilon, reduction=reduction, name=name)


class GaussianNLLLoss(_LossLayer):
    """`paddle.nn.GaussianNLLLoss`."""

    _fn = staticmethod(composite_loss.gaussian_nll_loss)

    def __init__(self, full: bool = False, epsilon: float = 1e-6, reduction: str = "mean",
                 name: str | None = None) -> None:
        composite.check_reduction("GaussianNLLLoss", reduction)
        super().__init__(full=full, epsilon=epsilon, reduction=reduction, name=name)


class CTCLoss(Layer):
    """`paddle.nn.CTCLoss`: `F.ctc_loss` with a fixed blank and reduction."""

    def __init__(self, blank: int = 0, reduction: str = "mean") -> None:
        super().__init__()
        composite.check_reduction("CTCLoss", reduction)
        self.blank, self.reduction = blank, reduction

    def forward(self, log_probs: Any, labels: Any, input_lengths: Any, label_lengths: Any,
                norm_by_times: bool = False) -> Any:
        """The CTC loss of the unscaled scores `log_probs [T, B, C]` for `labels`."""
        return composite_loss.ctc_loss(log_probs, labels, input_lengths, label_lengths, self.blank,
                                       self.reduction, norm_by_times)


__all__ = [
    "CTCLoss", "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
    "BCELoss", "CosineSimilarity", "Identity", "KLDivLoss", "LayerDict", "MarginRankingLoss",
    "NLLLoss", "ParameterList", "SmoothL1Loss",
]
