"""`paddle.Model` and `paddle.callbacks`: Paddle's high-level training API
(`model.py`, `callbacks.py`)."""
