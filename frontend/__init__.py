"""The Paddle-style frontend: programs and variables (`framework`), the one op-adding
path (`core.apply`), Paddle's API functions per op family (`ops/`), layers,
initializers, optimizers, and the public namespaces (`api/`)."""
