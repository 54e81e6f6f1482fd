// Custom and generic forms of the fused recurrent op and its gradient round-trip.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

%x = pd.data "x" : tensor<5x?x4xf32>
%h0 = pd.data "h0" : tensor<1x?x3xf32>
%c0 = pd.data "c0" : tensor<1x?x3xf32>
%len = pd.data "len" : tensor<?xi64>
%wih = pd.parameter "wih" : tensor<12x4xf32>
%whh = pd.parameter "whh" : tensor<12x3xf32>
%bih = pd.parameter "bih" : tensor<12xf32>
%bhh = pd.parameter "bhh" : tensor<12xf32>
%out, %h, %c, %res, %ds = pd.rnn %x, %h0, %c0, %wih, %whh, %bih, %bhh, %len {input_size = 4 : i64, hidden_size = 3 : i64, names = ["y", "h", "c", "r", "d"]} : (tensor<5x?x4xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<12x4xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<12xf32>, tensor<?xi64>) -> (tensor<5x?x3xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<5x?x18xf32>, tensor<1xi64>)
%dx, %dh, %dc, %d1, %d2, %d3, %d4 = pd.rnn_grad %x, %h0, %c0, %wih, %whh, %bih, %bhh, %len, %out, %res, %out, %h, %c {input_size = 4 : i64, hidden_size = 3 : i64} : (tensor<5x?x4xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<12x4xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<12xf32>, tensor<?xi64>, tensor<5x?x3xf32>, tensor<5x?x18xf32>, tensor<5x?x3xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>) -> (tensor<5x?x4xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<12x4xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<12xf32>)

// CHECK:      pd.rnn %x, %h0, %c0, %wih, %whh, %bih, %bhh, %len {input_size = 4 : i64, hidden_size = 3 : i64, names = ["y", "h", "c", "r", "d"]} : (tensor<5x?x4xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<12x4xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<12xf32>, tensor<?xi64>) -> (tensor<5x?x3xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<5x?x18xf32>, tensor<1xi64>)
// CHECK-NEXT: pd.rnn_grad %x, %h0, %c0, %wih, %whh, %bih, %bhh, %len, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {input_size = 4 : i64, hidden_size = 3 : i64} : {{.*}} -> (tensor<5x?x4xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<12x4xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<12xf32>)
// GENERIC:    "pd.rnn"(%x, %h0, %c0, %wih, %whh, %bih, %bhh, %len) <{input_size = 4 : i64, hidden_size = 3 : i64, names = ["y", "h", "c", "r", "d"]{{.*}}mode = "LSTM"
// GENERIC:    "pd.rnn_grad"
