// Each geometric typing rule rejects bad input with a message naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<?x4xf32>
%s = pd.data "s" : tensor<?xf32>
%u = pd.send_recv %x, %s, %s : (tensor<?x4xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x4xf32>
// CHECK: 'pd.send_recv': src_index must be int32 or int64, got tensor<?xf32>

// -----

%x = pd.data "x" : tensor<?x4xf32>
%s = pd.data "s" : tensor<3xi64>
%d = pd.data "d" : tensor<4xi64>
%u = pd.send_recv %x, %s, %d : (tensor<?x4xf32>, tensor<3xi64>, tensor<4xi64>) -> tensor<?x4xf32>
// CHECK: 'pd.send_recv': src_index has 3 entries but dst_index has 4

// -----

%x = pd.data "x" : tensor<?x4xf32>
%s = pd.data "s" : tensor<3xi64>
%u = pd.send_recv %x, %s, %s {reduce_op = "prod"} : (tensor<?x4xf32>, tensor<3xi64>, tensor<3xi64>) -> tensor<?x4xf32>
// CHECK: 'pd.send_recv': reduce_op must be one of ['sum', 'mean', 'max', 'min'], got 'prod'

// -----

%x = pd.data "x" : tensor<?x4xf32>
%s = pd.data "s" : tensor<3xi64>
%y = pd.data "y" : tensor<3x3xf32>
%u = pd.send_recv %x, %s, %s, %y : (tensor<?x4xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3x3xf32>) -> tensor<?x4xf32>
// CHECK: 'pd.send_recv': operand shapes [4] and [3] are not broadcastable

// -----

%x = pd.data "x" : tensor<?x4xf32>
%s = pd.data "s" : tensor<3xi64>
%y = pd.data "y" : tensor<3x4xf32>
%u = pd.send_recv %x, %s, %s, %y {message_op = "pow"} : (tensor<?x4xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3x4xf32>) -> tensor<?x4xf32>
// CHECK: 'pd.send_recv': message_op must be one of ['add', 'sub', 'mul', 'div'], got 'pow'

// -----

%x = pd.data "x" : tensor<5x4xf32>
%i = pd.data "i" : tensor<4xi64>
%g = pd.segment_pool %x, %i : (tensor<5x4xf32>, tensor<4xi64>) -> tensor<?x4xf32>
// CHECK: 'pd.segment_pool': segment_ids has 4 entries but dimension 0 of x has 5

// -----

%x = pd.data "x" : tensor<3xi64>
%n = pd.data "n" : tensor<7xi64>
%c = pd.data "c" : tensor<4xi64>
%r:3 = pd.reindex_graph %x, %n, %c : (tensor<3xi64>, tensor<7xi64>, tensor<4xi64>) -> (tensor<7xi64>, tensor<7xi64>, tensor<?xi64>)
// CHECK: 'pd.reindex_graph': count has 4 entries, not a multiple of the 3 nodes of x

// -----

%r = pd.data "r" : tensor<?xi64>
%n = pd.data "n" : tensor<3xi64>
%o:3 = pd.sample_neighbors %r, %r, %n {return_eids = true} : (tensor<?xi64>, tensor<?xi64>, tensor<3xi64>) -> (tensor<?xi64>, tensor<3xi64>, tensor<?xi64>)
// CHECK: 'pd.sample_neighbors': return_eids needs eids
