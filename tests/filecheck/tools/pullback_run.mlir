// pullback-run: feeds from .npy files, parameters from files or a startup program,
// fetches by name (default: the pd.fetch values); clear errors with exit status 1.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(6, dtype=np.float32).reshape(2, 3)); np.save('%t/w.npy', np.ones((3, 1), np.float32)); np.save('%t/x64.npy', np.ones((2, 3)))"
// RUN: pullback-run %S/inputs/linear.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy | filecheck %s --check-prefix=MEAN
// RUN: pullback-run %S/inputs/linear.mlir --feed x=%t/x.npy --startup %S/inputs/linear_startup.mlir --fetch fc_0.tmp_0 | filecheck %s --check-prefix=STARTUP
// RUN: pullback-run %S/inputs/linear.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --out %t/out && %python -c "import numpy as np; print(np.load('%t/out/mean_0.tmp_0.npy'))" | filecheck %s --check-prefix=SAVED
// RUN: not pullback-run %S/inputs/linear.mlir --feed x=%t/x.npy 2>&1 | filecheck %s --check-prefix=NOPARAM
// RUN: not pullback-run %S/inputs/linear.mlir --feed x=%t/x64.npy --param fc_0.w_0=%t/w.npy 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: not pullback-run %S/inputs/linear.mlir --param fc_0.w_0=%t/w.npy 2>&1 | filecheck %s --check-prefix=NOFEED
// RUN: not pullback-run %S/inputs/linear.mlir --feed x=%t/missing.npy 2>&1 | filecheck %s --check-prefix=NOFILE
// RUN: not pullback-run %S/inputs/linear.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --fetch nope 2>&1 | filecheck %s --check-prefix=FETCH
// RUN: not pullback-run %S/inputs/bad_type.mlir 2>&1 | filecheck %s --check-prefix=BADIR

// MEAN: mean_0.tmp_0 = 7.5  # [] float32

// STARTUP:      fc_0.tmp_0 = [[ 6.],
// STARTUP-NEXT:  [24.]]  # [2, 1] float32

// SAVED: 7.5

// NOPARAM:     linear.mlir: error: no value for parameter(s) 'fc_0.w_0': pass --param NAME=FILE.npy, --params DIR or --startup FILE.mlir
// NOPARAM-NOT: Traceback

// DTYPE: linear.mlir: error: The data type of fed variable 'x' must be float32, but received float64

// NOFEED: linear.mlir: error: feed 'x' is missing: the program reads data variable 'x' (shape [-1, 3], float32)

// NOFILE: pullback-run: error: --feed x: no such file '{{.*}}missing.npy'

// FETCH: linear.mlir: error: fetch variable 'nope' is not in the program

// BADIR:     bad_type.mlir:2:1: error: 'pd.relu': result #0 has type tensor<?x14xf32>
// BADIR-NOT: Traceback
