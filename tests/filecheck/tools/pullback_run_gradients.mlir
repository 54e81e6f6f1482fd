// pullback-run fills an empty pd.backward region, so its gradients can be fetched
// by name (`fc_0.w_0@GRAD`), on the interpreter and on compiled code alike.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(6, dtype=np.float32).reshape(2, 3)); np.save('%t/w.npy', np.ones((3, 1), np.float32))"
// RUN: pullback-run %S/inputs/linear_backward.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --fetch mean_0.tmp_0 --fetch fc_0.w_0@GRAD | filecheck %s
// RUN: pullback-run %S/inputs/linear_backward.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --fetch fc_0.w_0@GRAD --backend compiled | filecheck %s --check-prefix=GRAD
// RUN: not pullback-run %S/inputs/linear_backward.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --fetch fc_0.b_0@GRAD 2>&1 | filecheck %s --check-prefix=MISSING
// A forward-only program is differentiated with --targets/--wrt, as
// `pullback-opt -p 'autodiff{targets=... wrt=...}'` does.
// RUN: %python -c "import numpy as np; np.save('%t/b.npy', np.zeros((1,), np.float32))"
// RUN: pullback-run %S/inputs/forward_only.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --param fc_0.b_0=%t/b.npy --targets mean_0.tmp_0 --fetch fc_0.w_0@GRAD --fetch fc_0.b_0@GRAD | filecheck %s --check-prefix=TARGETS
// RUN: pullback-run %S/inputs/forward_only.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --param fc_0.b_0=%t/b.npy --targets mean_0.tmp_0 --wrt x,fc_0.b_0 --fetch x@GRAD --fetch fc_0.b_0@GRAD --backend compiled | filecheck %s --check-prefix=WRT
// RUN: not pullback-run %S/inputs/forward_only.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --param fc_0.b_0=%t/b.npy --targets mean_0.tmp_0 --wrt fc_0.b_0 --fetch fc_0.w_0@GRAD 2>&1 | filecheck %s --check-prefix=NOTWRT
// RUN: not pullback-run %S/inputs/forward_only.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --param fc_0.b_0=%t/b.npy --targets mean_0.tmp --fetch x 2>&1 | filecheck %s --check-prefix=BADTARGET
// RUN: not pullback-run %S/inputs/forward_only.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --param fc_0.b_0=%t/b.npy --wrt x --fetch x 2>&1 | filecheck %s --check-prefix=NOTARGETS

// d mean(x @ w) / dw = the column means of x: [1.5, 2.5, 3.5].
// CHECK:      mean_0.tmp_0 = 7.5  # [] float32
// CHECK-NEXT: fc_0.w_0@GRAD = {{\[}}[1.5],
// CHECK-NEXT:  [2.5],
// CHECK-NEXT:  [3.5]]  # [3, 1] float32

// GRAD:      fc_0.w_0@GRAD = {{\[}}[1.5],
// GRAD-NEXT:  [2.5],
// GRAD-NEXT:  [3.5]]  # [3, 1] float32

// MISSING: linear_backward.mlir: error: fetch variable 'fc_0.b_0@GRAD' is not in the program

// TARGETS:      fc_0.w_0@GRAD = {{\[}}[1.5],
// TARGETS-NEXT:  [2.5],
// TARGETS-NEXT:  [3.5]]  # [3, 1] float32
// TARGETS-NEXT: fc_0.b_0@GRAD = [1.]  # [1] float32

// d mean(x @ w + b) / dx = w^T / 2 (two rows): 0.5 everywhere.
// WRT:      x@GRAD = {{\[}}[0.5, 0.5, 0.5],
// WRT-NEXT:  [0.5, 0.5, 0.5]]  # [2, 3] float32
// WRT-NEXT: fc_0.b_0@GRAD = [1.]  # [1] float32

// NOTWRT: forward_only.mlir: error: fetch variable 'fc_0.w_0@GRAD' is not in the program; did you mean 'fc_0.b_0@GRAD'

// BADTARGET: forward_only.mlir: error: autodiff: target 'mean_0.tmp' is not a value of the program; did you mean 'mean_0.tmp_0'

// NOTARGETS: pullback-run: error: --wrt and --no-grad need --targets
