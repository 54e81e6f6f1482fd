// The fused recurrent op names itself and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<5x2x4xf32>
%h = pd.data "h" : tensor<1x2x3xf32>
%w = pd.data "w" : tensor<3x4xf32>
%u = pd.data "u" : tensor<3x3xf32>
%b = pd.data "b" : tensor<3xf32>
%o, %s, %r, %d = pd.rnn %x, %h, %w, %u, %b, %b {mode = "LSTMX", input_size = 4 : i64, hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<5x2x3xf32>, tensor<1x2x3xf32>, tensor<5x2x3xf32>, tensor<1xi64>)
// CHECK: 'pd.rnn': mode must be one of ['LSTM', 'GRU', 'RNN_TANH', 'RNN_RELU'], got 'LSTMX'

// -----

%x = pd.data "x" : tensor<5x2x4xf32>
%h = pd.data "h" : tensor<1x2x3xf32>
%w = pd.data "w" : tensor<3x4xf32>
%b = pd.data "b" : tensor<3xf32>
%o, %s, %r, %d = pd.rnn %x, %h, %w, %w, %b, %b {mode = "RNN_TANH", input_size = 4 : i64, hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<5x2x3xf32>, tensor<1x2x3xf32>, tensor<5x2x3xf32>, tensor<1xi64>)
// CHECK: 'pd.rnn': weight #1 must have shape [3, 3] and the input's dtype, got tensor<3x4xf32>

// -----

%x = pd.data "x" : tensor<5x2x4xf32>
%h = pd.data "h" : tensor<1x2x3xf32>
%w = pd.data "w" : tensor<3x4xf32>
%u = pd.data "u" : tensor<3x3xf32>
%b = pd.data "b" : tensor<3xf32>
%o, %s, %r, %d = pd.rnn %x, %h, %w, %u, %b {mode = "RNN_TANH", input_size = 4 : i64, hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<3x3xf32>, tensor<3xf32>) -> (tensor<5x2x3xf32>, tensor<1x2x3xf32>, tensor<5x2x3xf32>, tensor<1xi64>)
// CHECK: 'pd.rnn': mode RNN_TANH with 1 layer(s) and 1 direction(s) takes 6 operands (input, 1 state(s), 4 weights) plus an optional sequence_length, got 5

// -----

%x = pd.data "x" : tensor<5x2x4xf32>
%h = pd.data "h" : tensor<1x3x3xf32>
%w = pd.data "w" : tensor<3x4xf32>
%u = pd.data "u" : tensor<3x3xf32>
%b = pd.data "b" : tensor<3xf32>
%o, %s, %r, %d = pd.rnn %x, %h, %w, %u, %b, %b {mode = "RNN_TANH", input_size = 4 : i64, hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x3x3xf32>, tensor<3x4xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<5x2x3xf32>, tensor<1x2x3xf32>, tensor<5x2x3xf32>, tensor<1xi64>)
// CHECK: 'pd.rnn': pre_state #0 must be [1, batch, 3] of the input's dtype, got tensor<1x3x3xf32>

// -----

%x = pd.data "x" : tensor<5x2x4xf32>
%h = pd.data "h" : tensor<1x2x3xf32>
%w = pd.data "w" : tensor<3x4xf32>
%u = pd.data "u" : tensor<3x3xf32>
%b = pd.data "b" : tensor<3xf32>
%l = pd.data "l" : tensor<2xf32>
%o, %s, %r, %d = pd.rnn %x, %h, %w, %u, %b, %b, %l {mode = "RNN_TANH", input_size = 4 : i64, hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) -> (tensor<5x2x3xf32>, tensor<1x2x3xf32>, tensor<5x2x3xf32>, tensor<1xi64>)
// CHECK: 'pd.rnn': sequence_length must be an int32/int64 [batch] tensor, got tensor<2xf32>
