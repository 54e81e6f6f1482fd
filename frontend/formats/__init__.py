"""Reading and writing Paddle's own files, safely.

* `safe_pickle`: the only unpickler pullback's loaders use: it builds numpy arrays,
  dtypes and Python containers, numbers and strings, and refuses anything else
  (a file cannot make pullback import a module or call a function).
* `wire`: the protobuf wire format (varints, length-delimited fields), by hand.
* `program_desc`: Paddle's legacy `ProgramDesc` (`framework.proto`) as dataclasses.
* `tensor_stream`: Paddle's binary tensor serialization (`.pdiparams`, a
  `paddle.save(..., use_binary_format=True)` file).
* `pir_json`: Paddle 3's PIR program files (`<prefix>.json`).
* `importer`: either program form as a `pd` Program, op by op through the
  frontend's own builders.

Errors are `FileFormatError`s (a `ValueError`) naming the file and what is wrong.
"""

from pullback.frontend.formats.errors import FileFormatError, UnsafeFileError

__all__ = ["FileFormatError", "UnsafeFileError"]
