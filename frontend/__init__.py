"""The Paddle-style frontend: programs and variables (`framework`), the one op-adding
path (`core.apply`), Paddle's API functions per op family (`ops/`), layers,
initializers, optimizers, and the public namespaces (`api/`).

Importing this package wires those pieces together once (`install.install`: eager
mode's `apply`, the operators and methods of Variables and Tensors), so every module
of the frontend works however it was reached."""

from pullback.frontend.install import install

install()
