// docs/ir_tutorial.md cannot rot: its programs are extracted from the Markdown and
// every command the tutorial shows is run here, with the output it shows.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/inputs/extract_blocks.py %S/../../../docs/ir_tutorial.md %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.array([[1, 2], [3, 4]], np.float32)); np.save('%t/label.npy', np.array([[1], [2]], np.float32))"
// RUN: pullback-opt %t/main.mlir | filecheck %s --check-prefix=PRINT
// RUN: pullback-opt %t/main.mlir -p autodiff | filecheck %s --check-prefix=AD
// RUN: pullback-opt %t/main.mlir -p autodiff,lower-to-loops -t llvm | filecheck %s --check-prefix=LLVM
// RUN: pullback-run %t/main.mlir --startup %t/startup.mlir --feed x=%t/x.npy --feed label=%t/label.npy | filecheck %s --check-prefix=LOSS
// RUN: pullback-run %t/main.mlir --startup %t/startup.mlir --feed x=%t/x.npy --feed label=%t/label.npy --fetch fc_0.w_0@GRAD --fetch fc_0.b_0@GRAD --fetch fc_0.w_0 | filecheck %s --check-prefix=STEP
// RUN: pullback-run %t/main.mlir --startup %t/startup.mlir --feed x=%t/x.npy --feed label=%t/label.npy --fetch fc_0.w_0@GRAD --backend compiled | filecheck %s --check-prefix=COMPILED
// RUN: not pullback-run %t/main.mlir --startup %t/startup.mlir --feed x=%t/x.npy --feed label=%t/label.npy --fetch fc_0.w0@GRAD 2>&1 | filecheck %s --check-prefix=TYPO
// RUN: sed 's/elementwise_sub %%y,/elementwise_sub %%yy,/' %t/main.mlir > %t/main_typo.mlir
// RUN: not pullback-opt %t/main_typo.mlir 2>&1 | filecheck %s --check-prefix=UNDEF
// RUN: grep -v -e pd.backward -e '^} ->' -e pd.sgd %t/main.mlir > %t/forward.mlir
// RUN: pullback-run %t/forward.mlir --startup %t/startup.mlir --feed x=%t/x.npy --feed label=%t/label.npy --targets mean_0.tmp_0 --wrt fc_0.w_0,x --fetch fc_0.w_0@GRAD --fetch x@GRAD | filecheck %s --check-prefix=FORWARD

// PRINT:     %x = pd.data "x" : tensor<?x2xf32>
// PRINT:     %gw, %gb = pd.backward targets(%loss : tensor<f32>)
// PRINT:     pd.fetch %loss : tensor<f32>

// AD: pd.matmul %x, %{{[0-9]+}} {transpose_x = true, name = "fc_0.w_0@GRAD"}

// LLVM: define void @"main"(

// LOSS: mean_0.tmp_0 = 1.25  # [] float32

// STEP:      fc_0.w_0@GRAD = {{\[}}[5.],
// STEP-NEXT:  [7.]]  # [2, 1] float32
// STEP-NEXT: fc_0.b_0@GRAD = [2.]  # [1] float32
// STEP-NEXT: fc_0.w_0 = {{\[}}[ 0.        ],
// STEP-NEXT:  [-0.19999999]]  # [2, 1] float32

// COMPILED:      fc_0.w_0@GRAD = {{\[}}[5.],
// COMPILED-NEXT:  [7.]]  # [2, 1] float32

// TYPO: main.mlir: error: fetch variable 'fc_0.w0@GRAD' is not in the program; did you mean 'fc_0.w_0@GRAD'

// UNDEF: main_typo.mlir:10:25: error: use of undefined value '%yy'; did you mean '%y'?

// FORWARD:      fc_0.w_0@GRAD = {{\[}}[5.],
// FORWARD-NEXT:  [7.]]  # [2, 1] float32
// FORWARD-NEXT: x@GRAD = {{\[}}[0.25, 0.25],
// FORWARD-NEXT:  [0.75, 0.75]]  # [2, 2] float32
