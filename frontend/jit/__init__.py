"""`paddle.jit`: dynamic-to-static conversion (`to_static`), and saving a converted
model for inference (`save`/`load`).  See `static_function.py` (tracing),
`program.py` (the compiled forward and backward) and `save_load.py`."""
